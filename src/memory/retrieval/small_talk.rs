//! Whether a message is only small talk ("thanks!", "good morning",
//! "sounds good", "哈哈，好的", "お疲れさま", "고마워요"): then recall
//! looks for nothing, and the context is the one for no message (no
//! bytes spent on turns that merely share a greeting).
//!
//! A message is small talk when every word of it is a word of small
//! talk or a stopword, or laughter ("hahaha", "lol", "ㅋㅋㅋ", "www"),
//! drawn out or not ("sooo cool"); a run of Chinese, Japanese or Korean
//! (no spaces between words) when it splits wholly into such phrases
//! ("謝謝你辛苦了" = 謝謝 你 辛苦了). Only the whole message counts: in
//! "good morning, how is Biscuit?" or "thanks for the sushi recipe"
//! every word is looked for as ever. A message that asks something is
//! small talk only as a greeting ("how are you?"): "which one?" or
//! "真的嗎？" follows up what came before it.

use unicode_normalization::UnicodeNormalization as _;

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
    let normal: String = text.nfkc().flat_map(char::to_lowercase).collect();
    if normal.contains('?') {
        return is_greeting_question(&normal);
    }
    // (Only emoji or punctuation: nothing to look for either.)
    pieces(&normal).all(piece_is_small_talk)
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

fn piece_is_small_talk(piece: &str) -> bool {
    if piece.chars().next().is_some_and(tokenize::is_cjk) {
        return splits_into_phrases(piece);
    }
    if piece.chars().any(|c| c.is_numeric()) {
        return false;
    }
    let word = piece.replace('\u{2019}', "'");
    is_small_talk_word(&word)
        || is_laughter(&word)
        || drawn_in(&word, 2).is_some_and(|w| is_small_talk_word(&w))
        || drawn_in(&word, 1).is_some_and(|w| is_small_talk_word(&w))
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

/// A message that asks: small talk only as one of [`GREETING_QUESTIONS`]
/// (its words, punctuation left out).
fn is_greeting_question(normal: &str) -> bool {
    let words: Vec<String> = pieces(normal).map(|p| p.replace('\u{2019}', "'")).collect();
    !words.is_empty()
        && GREETING_QUESTIONS
            .binary_search(&words.join(" ").as_str())
            .is_ok()
}

/// Han laughter, and Hangul's ㅋ ㅎ ㅠ ㅜ as NFKC writes them
/// (conjoining jamo).
const LAUGHTER: &[char] = &[
    '哈', '呵', '嘻', '嘿', '笑', '草', '\u{110F}', '\u{1112}', '\u{1172}', '\u{116E}',
];

/// Words (beside the stopwords) that a message made only of says nothing
/// to look for. Sorted (a test checks), lower case. No word of time
/// ("tomorrow") or of asking: those follow something up.
const WORDS: &[&str] = &[
    "absolutely",
    "afternoon",
    "agree",
    "agreed",
    "ah",
    "alright",
    "amazing",
    "anytime",
    "appreciate",
    "appreciated",
    "asking",
    "aw",
    "awesome",
    "aww",
    "back",
    "bad",
    "brb",
    "brilliant",
    "care",
    "checking",
    "cheers",
    "ciao",
    "congrats",
    "congratulations",
    "cool",
    "course",
    "cute",
    "day",
    "definitely",
    "done",
    "dream",
    "dreams",
    "evening",
    "exactly",
    "excellent",
    "fab",
    "fantastic",
    "fine",
    "gm",
    "gn",
    "good",
    "goodbye",
    "goodnight",
    "gotcha",
    "great",
    "help",
    "helping",
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
    "know",
    "later",
    "let",
    "letting",
    "like",
    "lmao",
    "lmfao",
    "lot",
    "lots",
    "love",
    "lovely",
    "luck",
    "makes",
    "miss",
    "morning",
    "much",
    "nah",
    "neat",
    "nice",
    "night",
    "nite",
    "nope",
    "noted",
    "np",
    "omg",
    "one",
    "ooh",
    "oops",
    "perfect",
    "plan",
    "pleasure",
    "problem",
    "right",
    "rofl",
    "same",
    "see",
    "sense",
    "share",
    "sharing",
    "soon",
    "sorry",
    "sounds",
    "super",
    "sure",
    "sweet",
    "take",
    "talk",
    "tc",
    "telling",
    "thankyou",
    "tks",
    "totally",
    "true",
    "ttyl",
    "ty",
    "tysm",
    "understood",
    "weekend",
    "welcome",
    "well",
    "wonderful",
    "woo",
    "worries",
    "worry",
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

/// Greetings that ask ("how are you?"), their words joined by a space.
/// Sorted (a test checks).
const GREETING_QUESTIONS: &[&str] = &[
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
    "また",
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
    "가세요",
    "감사",
    "감사합니다",
    "감사해요",
    "계세요",
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
    "내일",
    "네",
    "넵",
    "넹",
    "다음에",
    "대단해",
    "대단해요",
    "대박",
    "되세요",
    "땡큐",
    "또",
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
    "밤",
    "보내세요",
    "봐",
    "봐요",
    "수고",
    "수고하세요",
    "수고하셨습니다",
    "수고했어",
    "수고했어요",
    "아침",
    "안녕",
    "안녕하세요",
    "안녕히",
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
    "자",
    "자요",
    "잘",
    "저녁",
    "정말",
    "좋겠다",
    "좋네요",
    "좋다",
    "좋아",
    "좋아요",
    "좋은",
    "죄송합니다",
    "주무세요",
    "진짜",
    "천만에요",
    "축하합니다",
    "축하해",
    "축하해요",
    "파이팅",
    "하루",
    "헐",
    "화이팅",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_sorted() {
        for list in [WORDS, GREETING_QUESTIONS, CJK_PHRASES] {
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
            .chain(GREETING_QUESTIONS)
            .chain(CJK_PHRASES)
            .chain(&laughter)
        {
            let normal: String = w.nfkc().flat_map(char::to_lowercase).collect();
            assert_eq!(&normal, w);
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
