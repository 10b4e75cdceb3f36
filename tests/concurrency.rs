//! Many processes appending to one user at once: every record lands whole,
//! on its own line, none lost, each writer's records in its own order.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Instant;

use crate::common::TestEnv;

const WRITERS: usize = 16;
const PER_WRITER: usize = 200;

#[test]
fn sixteen_processes_appending_200_messages_each_to_one_user() {
    let env = TestEnv::new();
    // Generous lock deadline: under 16-way contention on a slow CI machine a
    // waiter must not give up; fsync off keeps the run fast.
    env.write_config(r#"{"durability":{"fsync":false,"lockTimeoutMs":60000}}"#);

    // Each writer is one `sh` looping over the binary: 16 real processes
    // contending at any moment, 3200 appends in all.
    let started = Instant::now();
    let children: Vec<_> = (0..WRITERS)
        .map(|writer| {
            env.append_writer(writer, PER_WRITER)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn a writer")
        })
        .collect();
    for (writer, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "writer {writer} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "writer {writer} warned: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    eprintln!(
        "{} appends took {:?}",
        WRITERS * PER_WRITER,
        started.elapsed()
    );

    let bytes = env.read_bytes("U1");
    assert!(bytes.ends_with(b"\n"), "the log ends with a newline");
    let lines = env.read_lines("U1");
    assert_eq!(lines.len(), WRITERS * PER_WRITER, "one line per append");

    let mut next: HashMap<usize, usize> = HashMap::new();
    for (n, line) in lines.iter().enumerate() {
        let message: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("line {} is not JSON ({e}): {line:?}", n + 1));
        let text = message["text"].as_str().expect("text is a string");
        let rest = text
            .strip_prefix("writer ")
            .unwrap_or_else(|| panic!("line {}: unexpected text {text:?}", n + 1));
        let (writer, i) = rest
            .split_once(" message ")
            .unwrap_or_else(|| panic!("line {}: unexpected text {text:?}", n + 1));
        let (writer, i): (usize, usize) = (writer.parse().unwrap(), i.parse().unwrap());
        assert_eq!(
            message["msgId"],
            format!("w{writer}-{i}").as_str(),
            "line {}: fields of one record stay together",
            n + 1
        );
        assert_eq!(message["role"], "user");
        let expected = next.entry(writer).or_insert(0);
        assert_eq!(
            i,
            *expected,
            "line {}: writer {writer}'s messages out of order or missing",
            n + 1
        );
        *expected += 1;
    }
    assert_eq!(next.len(), WRITERS, "every writer is present");
    assert!(next.values().all(|&count| count == PER_WRITER), "{next:?}");

    // The result reads back cleanly: no warning about a bad line.
    env.run(["context", "--user", "U1", "--window", "5"])
        .succeeds()
        .stderr_is("");
}
