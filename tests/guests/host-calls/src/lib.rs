//! Hostile guest driven by the packet's output text, one behaviour per
//! command (what a guest can do through the WASI imports a verifier has):
//!
//! - `sleep-ms N`: `std::thread::sleep` for N milliseconds (a
//!   `wasi:clocks` subscription and a `wasi:io/poll` wait), then complete;
//! - `sleep-then-read N`: sleep N milliseconds, then read the artifact
//!   `slow` and complete;
//! - `stdin`: read stdin to its end, then complete with the byte count;
//! - `clocks`: report what the clocks say, as the reason:
//!   `wall_ms=<ms since the epoch>;slept_ns=<monotonic ns across a 2.5 ms
//!   sleep>;same_wall=<true when two wall readings 2.5 ms apart agree>`;
//! - `entropy ID...`: read the clocks (wall, and monotonic around a short
//!   spin), 8 secure random bytes, a `RandomState` hash (the insecure seed)
//!   and the artifacts `ID...`, and answer all of it as the reason;
//!   complete when the first random byte is even (for record and replay);
//! - `stderr-flood MIB X`: write MIB MiB of 4-byte emoji and X bytes `x`
//!   to stderr, then panic with [`PANIC`];
//! - `reason-mib MIB` / `feedback-mib MIB`: answer a reason or feedback of
//!   MIB MiB;
//! - anything else: complete.
//!
//! The progress key is `key-mib MIB` MiB long for that command, else `k`.

use std::io::{Read, Write};
use std::time::{Duration, Instant, SystemTime};
use verdict_guest::{Artifacts, Packet, ProgressKey, Verdict, Verifier};

/// The panic message after a stderr flood.
pub const PANIC: &str = "flooded stderr";

/// The checker.
#[derive(Debug, Default)]
pub struct HostCalls;

fn command<'p>(packet: &'p Packet<'_>) -> (&'p str, u64) {
    let (name, args) = command_args(packet);
    (name, args[0])
}

fn command_args<'p>(packet: &'p Packet<'_>) -> (&'p str, [u64; 2]) {
    let mut words = packet.output_text.split_whitespace();
    let name = words.next().unwrap_or("");
    let mut arg = || words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
    (name, [arg(), arg()])
}

fn mib(n: u64) -> usize {
    usize::try_from(n).unwrap_or(0) * 1024 * 1024
}

fn entropy(packet: &Packet<'_>, artifacts: &dyn Artifacts) -> Verdict {
    use std::hash::BuildHasher;
    let wall = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let start = Instant::now();
    let mut spins = 0u64;
    while start.elapsed() < Duration::from_micros(1500) && spins < 10_000_000 {
        spins += 1;
    }
    let mono = start.elapsed().as_nanos();
    let mut random = [0u8; 8];
    let secure = getrandom::fill(&mut random).is_ok();
    let hashed = std::collections::hash_map::RandomState::new().hash_one(7u64);
    let mut reads = String::new();
    for id in packet.output_text.split_whitespace().skip(1) {
        let read = match artifacts.read(id) {
            Ok(data) => format!("{}:{}:{}", id, data.revision, data.bytes.len()),
            Err(e) => format!("{id}:{}", e.code()),
        };
        reads.push_str(&read);
        reads.push(',');
    }
    let listed = artifacts.list("").map(|ids| ids.len()).unwrap_or(0);
    let reason = format!(
        "wall={wall};mono={mono};random={};secure={secure};hash={hashed};reads={reads};listed={listed}",
        u64::from_le_bytes(random)
    );
    if random[0] % 2 == 0 {
        Verdict::complete().with_reason(reason)
    } else {
        Verdict::incomplete("odd").with_reason(reason)
    }
}

fn clocks() -> String {
    let since_epoch = || {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
    };
    let wall = since_epoch();
    let start = Instant::now();
    std::thread::sleep(Duration::from_micros(2500));
    let slept = start.elapsed();
    format!(
        "wall_ms={};slept_ns={};same_wall={}",
        wall.as_millis(),
        slept.as_nanos(),
        since_epoch() == wall
    )
}

impl Verifier for HostCalls {
    fn check(&self, packet: &Packet, artifacts: &dyn Artifacts) -> Verdict {
        match command(packet) {
            ("sleep-ms", ms) => {
                std::thread::sleep(Duration::from_millis(ms));
                Verdict::complete().with_reason("woke up")
            }
            ("sleep-then-read", ms) => {
                std::thread::sleep(Duration::from_millis(ms));
                let read = artifacts.read("slow").is_ok();
                Verdict::complete().with_reason(format!("read={read}"))
            }
            ("stdin", _) => {
                let mut input = Vec::new();
                let read = std::io::stdin().read_to_end(&mut input);
                Verdict::complete().with_reason(format!("stdin={read:?}"))
            }
            ("clocks", _) => Verdict::complete().with_reason(clocks()),
            ("entropy", _) => entropy(packet, artifacts),
            ("stderr-flood", _) => {
                let [n, xs] = command_args(packet).1;
                let chunk = "😀".repeat(16 * 1024);
                let mut stderr = std::io::stderr();
                for _ in 0..mib(n) / chunk.len() {
                    let _ = stderr.write_all(chunk.as_bytes());
                }
                let _ = stderr.write_all(&b"xxx"[..usize::try_from(xs.min(3)).unwrap_or(0)]);
                panic!("{PANIC}");
            }
            ("reason-mib", n) => Verdict::complete().with_reason("r".repeat(mib(n))),
            ("feedback-mib", n) => Verdict::incomplete("f".repeat(mib(n))),
            _ => Verdict::complete(),
        }
    }
}

impl ProgressKey for HostCalls {
    fn progress_key(&self, packet: &Packet, _artifacts: &dyn Artifacts) -> String {
        match command(packet) {
            ("key-mib", n) => "k".repeat(mib(n)),
            _ => "k".to_owned(),
        }
    }
}

verdict_guest::export!(completion: HostCalls, progress: HostCalls);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::MemoryArtifacts;

    #[test]
    fn commands_are_read_from_the_output_text() {
        let packet = Packet::new("e").with_output("reason-mib 1");
        let verdict = HostCalls.check(&packet, &MemoryArtifacts::new());
        assert_eq!(verdict.reason.map(|r| r.len()), Some(1024 * 1024));
        let packet = Packet::new("e").with_output("sleep-ms 1");
        assert!(HostCalls.check(&packet, &MemoryArtifacts::new()).complete);
        assert_eq!(
            HostCalls.progress_key(&Packet::new("e"), &MemoryArtifacts::new()),
            "k"
        );
    }
}
