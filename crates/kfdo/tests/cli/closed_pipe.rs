//! A command whose stdout is a pipe nobody reads any more (`kfdo ... | head -1`) ends
//! quietly, as other Unix tools do: killed by SIGPIPE or done, never a panic.

use crate::common::*;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

#[test]
fn capabilities_json_into_a_closed_pipe_ends_quietly() {
    for _ in 0..20 {
        // The read end is closed before kfdo starts: its first write meets a closed pipe.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = kfdo()
            .args(["capabilities", "--json"])
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!stderr.contains("Broken pipe"), "{stderr}");
        assert_ne!(o.status.code(), Some(101), "{stderr}");
        assert!(
            o.status.signal() == Some(libc::SIGPIPE) || o.status.success(),
            "ends as a Unix tool does (SIGPIPE), not {}: {stderr}",
            o.status
        );
    }
}
