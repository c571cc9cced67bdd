//! An oversized answer is measured in guest memory and refused without
//! being copied into the host: a guest returning a 64 MiB reason makes the
//! host allocate far less than 64 MiB. The host's heap is counted by a
//! global allocator; this binary holds one test so nothing else allocates
//! meanwhile. (Guest linear memory is mapped by wasmtime, not allocated.)
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design
#![allow(unsafe_code)] // a counting global allocator

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use verdict_policy::{CheckContext, VerdictError};
use verdict_sandbox::{CheckError, Limits};
use verdict_test_support::{check_packet, guests, load, read_parts, ready_tenant};

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; the counters are
// plain atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn an_oversized_reason_is_not_copied_into_the_host() {
    const MIB_64: usize = 64 * 1024 * 1024;
    let verifier = load(guests::HOSTILE_HOST_CALLS);
    let (tenant, _) = ready_tenant("copy");
    let tenant = tenant.with_limits(Limits {
        memory_bytes: 128 * 1024 * 1024,
        ..Limits::default()
    });
    let mut packet = read_parts();
    packet.output_text = "reason-mib 64".into();
    let packet = check_packet(packet);
    // Warm up (first call, lazy statics), then measure a second call.
    let _ = verifier.check(&tenant, &packet, &CheckContext::new());
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let outcome = verifier.check(&tenant, &packet, &CheckContext::new());
    let extra = PEAK.load(Ordering::Relaxed) - before;
    assert_eq!(
        outcome.result,
        Err(CheckError::InvalidVerdict(VerdictError::ReasonTooLong {
            chars: MIB_64
        }))
    );
    assert!(
        extra < 8 * 1024 * 1024,
        "the host allocated {extra} bytes for a refused 64 MiB reason"
    );
}
