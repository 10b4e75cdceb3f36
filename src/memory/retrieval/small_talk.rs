//! Whether a message is only small talk ("thanks!", "good morning",
//! "sounds good", "哈哈，好的", "お疲れさま", "고마워요"): then recall
//! looks for nothing, and the context is the one for no message (no
//! bytes spent on turns that merely share a greeting).
//!
//! A message is small talk when it splits wholly into: stopwords, words
//! that are small talk on their own ("cool", "awesome", "yep"; laughter,
//! "hahaha", "lol", "www"; drawn out or not, "sooo cool"), phrases of it
//! ("good morning", "take care", "no worries", "좋은 아침"), and runs of
//! Chinese, Japanese or Korean (no spaces between words) that split
//! wholly into small-talk phrases ("謝謝你辛苦了" = 謝謝 你 辛苦了). A word
//! that can carry what a person means ("love", "plan", "morning", "back",
//! "tomorrow", 내일) counts only inside a phrase: "I had a bad dream",
//! "my back", "in the morning", "내일 저녁" are looked for as ever. A
//! message that asks (a "?", or a first word that asks: "what did we
//! talk about") is small talk only as greetings among small talk, each
//! greeting a sentence of its own ("how are you?", "hey! how's it going
//! lol", "おはよう！元気？"): "which one?", "how are you so sure?" or
//! "真的嗎？" follows up what came before it.

use super::tokenize;

/// Longer than this, a message says something (small talk is short; and
/// the check costs nothing on a long message).
const MAX_CHARS: usize = 120;

/// The longest phrase of [`CJK_PHRASES`], in characters.
const MAX_PHRASE_CHARS: usize = 12;

pub fn is_small_talk(text: &str) -> bool {
    if text.chars().nth(MAX_CHARS).is_some() {
        return false;
    }
    let normal = tokenize::folded(text);
    let words = words_of(&normal);
    if GREETINGS.binary_search(&words.join(" ").as_str()).is_ok() {
        return true;
    }
    if !asks(&normal, &words) {
        // (Only emoji or punctuation: nothing to look for either.)
        return splits_into_small_talk(&words);
    }
    // It asks: small talk only as greetings among small talk, each
    // greeting a sentence of its own ("hey! how are you doing?"), so
    // "how are you so sure?" and "how are you? and her?" still ask.
    sentences(&normal).all(|sentence| {
        let words = words_of(sentence);
        is_greeting(&words) || (!asks(sentence, &words) && splits_into_small_talk(&words))
    })
}

/// The words of `normal` as the check sees them.
fn words_of(normal: &str) -> Vec<String> {
    pieces(normal).map(|p| p.replace('\u{2019}', "'")).collect()
}

/// Whether `text` (of `words`) asks: a "?", or a first word that asks.
fn asks(text: &str, words: &[String]) -> bool {
    text.contains('?')
        || words
            .first()
            .is_some_and(|w| ASKING.binary_search(&w.as_str()).is_ok())
}

/// `normal` cut after each run of punctuation (or emoji): its sentences,
/// each with the "?" that ends it.
fn sentences(normal: &str) -> impl Iterator<Item = &str> {
    let is_word =
        |c: char| c.is_alphanumeric() || c.is_whitespace() || c == '\'' || c == '\u{2019}';
    let mut rest = normal;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let words_end = rest.find(|c: char| !is_word(c)).unwrap_or(rest.len());
        let end = rest[words_end..]
            .find(is_word)
            .map_or(rest.len(), |k| words_end + k);
        let (sentence, after) = rest.split_at(end);
        rest = after;
        Some(sentence)
    })
}

/// A greeting (of [`GREETINGS`]) with at most a hello before it and
/// laughter after it: "hey how's it going lol", "안녕 잘 지내".
fn is_greeting(words: &[String]) -> bool {
    let start = words
        .iter()
        .position(|w| !OPENERS.contains(&w.as_str()))
        .unwrap_or(words.len());
    let end = words
        .iter()
        .rposition(|w| !is_laughter(w))
        .map_or(start, |k| (k + 1).max(start));
    start < end
        && GREETINGS
            .binary_search(&words[start..end].join(" ").as_str())
            .is_ok()
}

/// What may stand before a greeting in its sentence.
const OPENERS: &[&str] = &[
    "hey", "heya", "hi", "hiya", "hello", "oh", "ok", "okay", "yo", "안녕",
];

/// Whether `words` split wholly into words and phrases of small talk.
fn splits_into_small_talk(words: &[String]) -> bool {
    let mut reachable = vec![false; words.len() + 1];
    reachable[0] = true;
    for i in 0..words.len() {
        if !reachable[i] {
            continue;
        }
        if word_is_small_talk(&words[i]) {
            reachable[i + 1] = true;
        }
        for phrase in PHRASES {
            let n = phrase.split(' ').count();
            if words.len() - i >= n
                && phrase
                    .split(' ')
                    .eq(words[i..i + n].iter().map(String::as_str))
            {
                reachable[i + n] = true;
            }
        }
    }
    reachable[words.len()]
}

/// The runs of letters and digits (and apostrophes inside words), each
/// split where CJK meets other letters ("ok啦" → "ok", "啦").
fn pieces(normal: &str) -> impl Iterator<Item = &str> {
    normal
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}'))
        .map(|w| w.trim_matches(['\'', '\u{2019}']))
        .filter(|w| !w.is_empty())
        .flat_map(script_runs)
}

fn script_runs(word: &str) -> Vec<&str> {
    let mut runs = Vec::new();
    let mut start = 0;
    let mut cjk = None;
    for (i, c) in word.char_indices() {
        let here = tokenize::is_cjk(c);
        if cjk.is_some_and(|was| was != here) {
            runs.push(&word[start..i]);
            start = i;
        }
        cjk = Some(here);
    }
    runs.push(&word[start..]);
    runs
}

fn word_is_small_talk(piece: &str) -> bool {
    if piece.chars().next().is_some_and(tokenize::is_cjk) {
        return splits_into_phrases(piece);
    }
    if piece.chars().any(|c| c.is_numeric()) {
        return false;
    }
    is_small_talk_word(piece)
        || is_laughter(piece)
        || drawn_in(piece, 2).is_some_and(|w| is_small_talk_word(&w))
        || drawn_in(piece, 1).is_some_and(|w| is_small_talk_word(&w))
}

fn is_small_talk_word(word: &str) -> bool {
    tokenize::is_stopword(word) || WORDS.binary_search(&word).is_ok()
}

/// `word` with every run of three or more of a letter cut to `keep`
/// ("sooo" → "so", "cooool" → "cool"); `None` if it has no such run.
fn drawn_in(word: &str, keep: usize) -> Option<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::with_capacity(word.len());
    let mut drawn = false;
    let mut i = 0;
    while i < chars.len() {
        let mut j = i;
        while j < chars.len() && chars[j] == chars[i] {
            j += 1;
        }
        let run = j - i;
        drawn |= run >= 3;
        let n = if run >= 3 { keep } else { run };
        out.extend(std::iter::repeat_n(chars[i], n));
        i = j;
    }
    drawn.then_some(out)
}

/// "haha", "hehehe", "ahaha", "lol", "lolol", "loool", "www" (Japanese).
fn is_laughter(word: &str) -> bool {
    let h = word.chars().filter(|&c| c == 'h').count();
    let ha = h >= 2
        && word
            .chars()
            .all(|c| matches!(c, 'h' | 'a' | 'e' | 'i' | 'o'));
    let lol = word.len() >= 3
        && word.starts_with('l')
        && word.ends_with('l')
        && word.chars().all(|c| matches!(c, 'l' | 'o'));
    let w = word.len() >= 2 && word.chars().all(|c| c == 'w');
    ha || lol || w
}

/// Whether a run of CJK splits wholly into small-talk phrases (or
/// laughter, a character of [`LAUGHTER`] any number of times).
fn splits_into_phrases(run: &str) -> bool {
    let chars: Vec<char> = run.chars().collect();
    let mut reachable = vec![false; chars.len() + 1];
    reachable[0] = true;
    let mut phrase = String::new();
    for i in 0..chars.len() {
        if !reachable[i] {
            continue;
        }
        if LAUGHTER.contains(&chars[i]) {
            reachable[i + 1] = true;
        }
        phrase.clear();
        for j in i..chars.len().min(i + MAX_PHRASE_CHARS) {
            phrase.push(chars[j]);
            if CJK_PHRASES.binary_search(&phrase.as_str()).is_ok() {
                reachable[j + 1] = true;
            }
        }
    }
    reachable[chars.len()]
}

/// Han laughter, and Hangul's ㅋ ㅎ ㅠ ㅜ as NFKC writes them
/// (conjoining jamo).
const LAUGHTER: &[char] = &[
    '哈', '呵', '嘻', '嘿', '笑', '草', '\u{110F}', '\u{1112}', '\u{1172}', '\u{116E}',
];

/// Words (beside the stopwords) that are small talk on their own. Sorted
/// (a test checks), lower case. None that can carry what a person means
/// ("love", "plan", "back", a word of time): those only in [`PHRASES`].
const WORDS: &[&str] = &[
    "absolutely",
    "agreed",
    "ah",
    "alright",
    "amazing",
    "anytime",
    "appreciate",
    "appreciated",
    "aw",
    "awesome",
    "aww",
    "brb",
    "brilliant",
    "cheers",
    "ciao",
    "congrats",
    "congratulations",
    "cool",
    "cute",
    "definitely",
    "enjoy",
    "exactly",
    "excellent",
    "fab",
    "fantastic",
    "fine",
    "gm",
    "gn",
    "goodbye",
    "goodnight",
    "gotcha",
    "great",
    "hiya",
    "hm",
    "hmm",
    "hooray",
    "howdy",
    "hugs",
    "huh",
    "indeed",
    "interesting",
    "k",
    "kk",
    "lmao",
    "lmfao",
    "lovely",
    "much",
    "nah",
    "neat",
    "nice",
    "nite",
    "nope",
    "noted",
    "np",
    "omg",
    "ooh",
    "oops",
    "perfect",
    "right",
    "rofl",
    "same",
    "sorry",
    "super",
    "sure",
    "sweet",
    "tc",
    "thankyou",
    "tks",
    "totally",
    "true",
    "ttyl",
    "ty",
    "tysm",
    "understood",
    "welcome",
    "wonderful",
    "woo",
    "wow",
    "xd",
    "xo",
    "xoxo",
    "ya",
    "yay",
    "yea",
    "yep",
    "yup",
];

/// Whole messages (their words joined by a space) that are greetings,
/// asking or not ("how are you?", "morning!"). Sorted (a test checks).
const GREETINGS: &[&str] = &[
    "are you ok",
    "are you there",
    "how are u",
    "how are you",
    "how are you doing",
    "how have you been",
    "how is it going",
    "how r u",
    "how's it going",
    "how's your day",
    "hows it going",
    "morning",
    "night",
    "night night",
    "sup",
    "u ok",
    "wassup",
    "what's up",
    "whats up",
    "you ok",
    "you there",
    "お元気ですか",
    "你好吗",
    "你好嗎",
    "元気",
    "元気ですか",
    "在吗",
    "在嗎",
    "最近好吗",
    "最近好嗎",
    "잘 지내",
    "잘 지내요",
    "잘 지냈어",
    "잘 지냈어요",
];

/// Phrases of small talk, their words joined by a space: the words that
/// can carry what a person means, only as these. Korean's too (it
/// writes spaces between words). Sorted (a test checks).
const PHRASES: &[&str] = &[
    "a lot",
    "all good",
    "all right",
    "catch you later",
    "checking in",
    "fair enough",
    "for asking",
    "for helping",
    "for letting me know",
    "for sharing",
    "for telling me",
    "good afternoon",
    "good evening",
    "good job",
    "good luck",
    "good morning",
    "good night",
    "good one",
    "good to know",
    "have a good day",
    "have a good night",
    "have a good one",
    "have a good weekend",
    "have a great day",
    "have a great weekend",
    "have a nice day",
    "have a nice weekend",
    "have fun",
    "let me know",
    "love it",
    "love that",
    "love this",
    "love u",
    "love you",
    "makes sense",
    "me too",
    "miss you",
    "my bad",
    "my pleasure",
    "nice one",
    "no problem",
    "no worries",
    "not bad",
    "of course",
    "oh well",
    "same here",
    "see ya",
    "see you",
    "see you later",
    "see you soon",
    "sleep well",
    "sounds amazing",
    "sounds awesome",
    "sounds fun",
    "sounds good",
    "sounds great",
    "sounds like a plan",
    "sounds like fun",
    "sweet dreams",
    "take care",
    "talk later",
    "talk soon",
    "talk to you later",
    "the help",
    "welcome back",
    "well done",
    "you too",
    "your help",
    "다음에 봐요",
    "또 봐",
    "또 봐요",
    "안녕히 가세요",
    "안녕히 계세요",
    "안녕히 주무세요",
    "잘 자",
    "잘 자요",
    "잘 주무세요",
    "잘 지내",
    "잘 지내요",
    "좋은 꿈 꾸세요",
    "좋은 꿈 꿔",
    "좋은 밤",
    "좋은 밤 되세요",
    "좋은 아침",
    "좋은 아침이에요",
    "좋은 하루",
    "좋은 하루 되세요",
    "좋은 하루 보내세요",
];

/// First words that make a message ask something, "?" or not ("what
/// did we talk about"). Sorted (a test checks).
const ASKING: &[&str] = &[
    "am", "and", "any", "are", "can", "could", "did", "do", "does", "how", "how's", "hows", "is",
    "may", "might", "or", "shall", "should", "tell", "was", "were", "what", "what's", "whats",
    "when", "where", "which", "who", "who's", "whom", "whose", "why", "will", "would",
];

/// Chinese, Japanese and Korean small talk, as the phrases a run of it
/// splits into (particles, "你" and the like as phrases of their own:
/// "謝謝你", "好的喔"). Sorted by code point (a test checks).
const CJK_PHRASES: &[&str] = &[
    "あざす",
    "ありがと",
    "ありがとう",
    "ありがとうございました",
    "ありがとうございます",
    "ありがとうね",
    "ありがとね",
    "いいですね",
    "いいね",
    "いいよ",
    "いただきます",
    "いってきます",
    "いってらっしゃい",
    "うん",
    "ええ",
    "えへへ",
    "おかえり",
    "おかえりなさい",
    "おけ",
    "おつかれ",
    "おつかれさま",
    "おはよう",
    "おはようございます",
    "おめでとう",
    "おめでとうございます",
    "おやすみ",
    "おやすみなさい",
    "お大事に",
    "お疲れさま",
    "お疲れさまです",
    "お疲れ様",
    "お疲れ様です",
    "こんにちは",
    "こんばんは",
    "ごちそうさま",
    "ごめん",
    "ごめんなさい",
    "さすが",
    "さようなら",
    "じゃあ",
    "じゃあね",
    "じゃね",
    "すごい",
    "すごいね",
    "すみません",
    "そうか",
    "そうだね",
    "そうですね",
    "そうなんだ",
    "そっか",
    "たしかに",
    "ただいま",
    "どういたしまして",
    "どうも",
    "どうもありがとう",
    "な",
    "なるほど",
    "ね",
    "はい",
    "はは",
    "ははは",
    "はーい",
    "ばいばい",
    "ふふ",
    "ふふふ",
    "へぇ",
    "へえ",
    "へへ",
    "へー",
    "ほんと",
    "ほんとう",
    "ほんとに",
    "またね",
    "よ",
    "よかった",
    "よかったね",
    "よろしく",
    "よろしくお願いします",
    "りょうかい",
    "わかった",
    "わかりました",
    "オッケー",
    "ハハ",
    "ハハハ",
    "バイ",
    "バイバイ",
    "マジ",
    "マジで",
    "一起加油",
    "下午好",
    "不会",
    "不客气",
    "不客氣",
    "不會",
    "了",
    "了解",
    "了解しました",
    "了解です",
    "你",
    "你好",
    "再見",
    "再见",
    "分かった",
    "分かりました",
    "加油",
    "午安",
    "厉害",
    "厲害",
    "可以",
    "吧",
    "呀",
    "哇",
    "哈喽",
    "哈囉",
    "哦",
    "啊",
    "啦",
    "喔",
    "嗨",
    "嗯",
    "多謝",
    "多谢",
    "太好了",
    "太棒了",
    "好",
    "好吧",
    "好哦",
    "好啊",
    "好啦",
    "好喔",
    "好棒",
    "好滴",
    "好的",
    "好耶",
    "对",
    "对啊",
    "對",
    "對呀",
    "對啊",
    "恭喜",
    "您",
    "您好",
    "感恩",
    "感謝",
    "感谢",
    "拜拜",
    "掰掰",
    "收到",
    "早",
    "早上好",
    "早安",
    "是哦",
    "是啊",
    "是喔",
    "是的",
    "晚上好",
    "晚安",
    "本当",
    "本当に",
    "棒",
    "沒事",
    "沒問題",
    "沒錯",
    "没事",
    "没错",
    "没问题",
    "真的",
    "真的假的",
    "瞭解",
    "知道了",
    "確かに",
    "耶",
    "謝啦",
    "謝謝",
    "讚",
    "谢啦",
    "谢谢",
    "赞",
    "辛苦",
    "辛苦了",
    "酷",
    "감사",
    "감사합니다",
    "감사해요",
    "고마워",
    "고마워요",
    "고마워용",
    "고맙다",
    "고맙습니다",
    "괜찮아",
    "괜찮아요",
    "굿",
    "그래",
    "그래요",
    "그럼",
    "그럼요",
    "네",
    "넵",
    "넹",
    "대단해",
    "대단해요",
    "대박",
    "땡큐",
    "맞습니다",
    "맞아",
    "맞아요",
    "멋져",
    "멋져요",
    "미안",
    "미안해",
    "반가워",
    "반가워요",
    "반갑습니다",
    "수고",
    "수고하세요",
    "수고하셨습니다",
    "수고했어",
    "수고했어요",
    "안녕",
    "안녕하세요",
    "알겠습니다",
    "알겠어",
    "알겠어요",
    "알았어",
    "알았어요",
    "엉",
    "예",
    "오케이",
    "와",
    "우와",
    "웅",
    "응",
    "정말",
    "좋겠다",
    "좋네요",
    "좋다",
    "좋아",
    "좋아요",
    "죄송합니다",
    "진짜",
    "천만에요",
    "축하합니다",
    "축하해",
    "축하해요",
    "파이팅",
    "헐",
    "화이팅",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_sorted() {
        for list in [WORDS, GREETINGS, PHRASES, ASKING, CJK_PHRASES] {
            let mut sorted = list.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted, list);
        }
        assert!(
            CJK_PHRASES
                .iter()
                .all(|p| p.chars().count() <= MAX_PHRASE_CHARS)
        );
        // Written as the check sees them: lower case, NFKC.
        let laughter: Vec<String> = LAUGHTER.iter().map(char::to_string).collect();
        let laughter: Vec<&str> = laughter.iter().map(String::as_str).collect();
        for w in WORDS
            .iter()
            .chain(GREETINGS)
            .chain(PHRASES)
            .chain(ASKING)
            .chain(CJK_PHRASES)
            .chain(&laughter)
        {
            assert_eq!(&tokenize::folded(w), w);
        }
    }

    #[test]
    fn english_small_talk_in_its_many_forms() {
        for talk in [
            "thanks!",
            "Thank you so much!",
            "ok",
            "hi",
            "👍",
            "...",
            "Good morning!",
            "good night 😴",
            "Cool",
            "nice!!",
            "awesome, thanks",
            "great, thanks!",
            "Sounds good",
            "ok cool",
            "haha",
            "hahaha nice",
            "lol",
            "LOLOL",
            "sooo cool",
            "niiice",
            "yesss",
            "see you later",
            "take care",
            "have a nice day!",
            "you're welcome",
            "no worries",
            "got it, thanks",
            "That's so cool, thanks for sharing!",
            "thanks for letting me know",
            "how are you?",
            "What's up?",
        ] {
            assert!(is_small_talk(talk), "{talk:?} is small talk");
        }
    }

    /// A greeting that asks, among other small talk: small talk, in any
    /// language; with anything to look for beside it, not.
    #[test]
    fn a_greeting_among_small_talk_is_small_talk_even_as_it_asks() {
        for talk in [
            "how's it going lol",
            "hey! how are you doing?",
            "hi, how are you?",
            "haha ok, how have you been?",
            "おはよう！元気？",
            "안녕! 잘 지내?",
            "have fun!",
            "enjoy!",
            "good night, sleep well",
            "그럼요",
        ] {
            assert!(is_small_talk(talk), "{talk:?} is small talk");
        }
        for said in [
            // Follow-ups beside a greeting, or a greeting that goes on.
            "hey how's it going? is he ok?",
            "how are you doing? and her?",
            "how are you? what about them?",
            "how are you so sure?",
            "how are you doing that?",
            "are you ok with it?",
            "what's up? where is it?",
            "hi, how are you? how much?",
            "how are you doing with the move?",
            "how's it going with Biscuit?",
            "hi, how are you and your sister?",
            "enjoy the concert with Melanie!",
            "have fun at the lake house",
            "おはよう！猫は元気？",
            "how are you feeling after the surgery?",
            // A greeting of one English word only as the whole message.
            "hi, in the morning?",
            "that night?",
        ] {
            assert!(!is_small_talk(said), "{said:?} has something to look for");
        }
    }

    #[test]
    fn a_message_with_something_to_look_for_is_not_small_talk() {
        for said in [
            "good morning, how is Biscuit?",
            "thanks for the sushi recipe",
            "cool, what did my sister say about the puppy?",
            "nice photo of the lake",
            "see you tomorrow",
            "see you at 5",
            "which one?",
            "really?",
            "and her?",
            "how about the concert?",
            "謝謝你的貓",
            "好的，那我妹妹呢？",
            "真的嗎？",
            "おはよう、猫の名前は？",
            "笑話",
            "고마워, 고양이 이름 뭐였지?",
            "아침 먹었어",
            // Questions without a "?".
            "what's the plan for the weekend",
            "what did we talk about",
            "what was I telling you about",
            "what do you know about me",
            "which one",
            "how about the weekend",
            "what do I like",
            // Statements and short answers whose words could be small
            // talk's in another phrase.
            "I had a bad dream",
            "I have a problem",
            "I miss her",
            "I love him",
            "I know him",
            "help me",
            "my back",
            "love",
            "this weekend",
            "in the morning",
            "that night",
            "see you this weekend",
            "내일 저녁 좋아",
            "내일",
            "また",
        ] {
            assert!(!is_small_talk(said), "{said:?} has something to look for");
        }
        // A long message says something, whatever its words.
        assert!(!is_small_talk(&"thanks ".repeat(40)));
    }

    #[test]
    fn cjk_small_talk_splits_into_its_phrases() {
        for talk in [
            "謝謝！",
            "谢谢你",
            "嗯嗯，好的",
            "好的喔～",
            "辛苦了",
            "謝謝你辛苦了",
            "哈哈哈哈",
            "對啊",
            "ok啦",
            "ありがとう😊",
            "お疲れさまです！",
            "ははは",
            "了解しました",
            "うんうん",
            "またね〜",
            "真的假的！",
            "太棒了",
            "www",
            "ｗｗｗ",
            "고마워요",
            "ㅋㅋㅋㅋ",
            "좋은 아침!",
            "잘 자",
            "알겠어요",
            "응응",
            "잘 지내요?",
        ] {
            assert!(is_small_talk(talk), "{talk:?} is small talk");
        }
    }
}
