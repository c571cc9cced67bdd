//! Test guest racing timers, its answer depending on how the race went.
//!
//! The packet's output text is `race MS` (MS defaults to 5):
//!
//! 1. subscribes a timer of MS milliseconds and asks `ready()` in a loop,
//!    counting the answers `false` (with a little work between them);
//! 2. `poll`s a timer of MS seconds and one of zero, in that order, and
//!    notes the indices it answered;
//! 3. `block`s on a timer of MS milliseconds, then asks it `ready()`.
//!
//! The reason is `spins=N;polled=[..];after=BOOL`; the verdict is complete
//! when N is even. Live, N follows the host's speed; replayed from a record,
//! it must be the recorded one.

use verdict_guest::{Artifacts, Packet, ProgressKey, Verdict, Verifier};
use wasip2::clocks::monotonic_clock::subscribe_duration;
use wasip2::io::poll::poll;

/// Most `ready()` questions of step 1.
const MAX_SPINS: u64 = 10_000_000;

/// The checker.
#[derive(Debug, Default)]
pub struct TimerRace;

fn millis(packet: &Packet<'_>) -> u64 {
    let mut words = packet.output_text.split_whitespace().skip(1);
    words.next().and_then(|w| w.parse().ok()).unwrap_or(5)
}

fn race(ms: u64) -> String {
    let timer = subscribe_duration(ms.saturating_mul(1_000_000));
    let mut spins = 0u64;
    let mut work = 0u64;
    while !timer.ready() && spins < MAX_SPINS {
        spins += 1;
        for i in 0..16 {
            work = work.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i);
        }
    }
    let late = subscribe_duration(ms.saturating_mul(1_000_000_000));
    let soon = subscribe_duration(0);
    let polled = poll(&[&late, &soon]);
    let nap = subscribe_duration(ms.saturating_mul(1_000_000));
    nap.block();
    format!(
        "spins={spins};polled={polled:?};after={};work={}",
        nap.ready(),
        work % 2
    )
}

impl Verifier for TimerRace {
    fn check(&self, packet: &Packet, _artifacts: &dyn Artifacts) -> Verdict {
        let reason = race(millis(packet));
        let even = reason
            .split(';')
            .next()
            .and_then(|s| s.strip_prefix("spins="))
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n % 2 == 0);
        if even {
            Verdict::complete().with_reason(reason)
        } else {
            Verdict::incomplete("odd").with_reason(reason)
        }
    }
}

impl ProgressKey for TimerRace {
    fn progress_key(&self, packet: &Packet, _artifacts: &dyn Artifacts) -> String {
        race(millis(packet))
    }
}

verdict_guest::export!(completion: TimerRace, progress: TimerRace);
