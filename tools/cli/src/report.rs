//! How a binary ends: the error and each of its causes once, or quietly
//! when the reader of its output went away.
//!
//! The key decision: an error chain is printed as the user reads it, one
//! line per cause, every cause as it is. The workspace's errors never carry
//! a cause twice (an error that formats its cause into its message does not
//! also return it from `source()`), so nothing here filters repeats. A closed pipe (`planet-pack
//! info PACK | head`) is not a failure of the tool: it ends with status 0
//! and says nothing.

use std::io::ErrorKind;
use std::process::ExitCode;

/// The lines an error prints: `error: ...` then `  caused by: ...` for each
/// cause.
pub fn chain_lines(error: &anyhow::Error) -> Vec<String> {
    let mut lines = vec![format!("error: {error}")];
    lines.extend(error.chain().skip(1).map(|cause| format!("  caused by: {cause}")));
    lines
}

/// True when the error is, or was caused by, writing to a closed pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == ErrorKind::BrokenPipe))
}

/// Writes `line` to standard error, and nothing when it cannot: a message
/// or a progress line is for a person, so a closed stderr (a pipe whose
/// reader left) ends the messages, not the job (`eprintln!` panicked there
/// with status 101).
pub fn message(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The exit of a binary's `main`: success, a quiet success on a closed
/// pipe, or the error chain on stderr and status 1.
pub fn exit_code(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            for line in chain_lines(&error) {
                message(&line);
            }
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use anyhow::Context;

    use super::*;

    #[derive(Debug)]
    struct Inner;
    impl std::fmt::Display for Inner {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("checksum mismatch at byte 212")
        }
    }
    impl std::error::Error for Inner {}

    /// Regression: `PackError::File` printed its cause in its message and
    /// returned it from `source()`, so the chain said it twice (hidden then
    /// by a substring filter here).
    #[test]
    fn a_pack_error_in_a_file_prints_its_cause_once() {
        use planet_terrain::pack::PackError;
        let io = std::io::Error::new(ErrorKind::UnexpectedEof, "early end of file");
        let pack =
            PackError::Io { doing: "reading the index", cause: io }.in_file(std::path::Path::new("a.planetpack"));
        let error = anyhow::Error::new(pack).context("opening the base pack");
        assert_eq!(
            chain_lines(&error),
            [
                "error: opening the base pack",
                "  caused by: a.planetpack: I/O error while reading the index: early end of file"
            ]
        );
    }

    #[test]
    fn causes_with_their_own_words_all_print() {
        let error = Err::<(), _>(Inner).context("reading tile 3/7/45/102").context("sampling").unwrap_err();
        assert_eq!(
            chain_lines(&error),
            ["error: sampling", "  caused by: reading tile 3/7/45/102", "  caused by: checksum mismatch at byte 212"]
        );
    }

    #[test]
    fn a_closed_pipe_is_recognised_through_context() {
        let io = std::io::Error::new(ErrorKind::BrokenPipe, "pipe closed");
        assert!(is_broken_pipe(&anyhow::Error::new(io).context("writing the report")));
        assert!(!is_broken_pipe(&anyhow::anyhow!("something else")));
    }
}
