//! The lean build's global allocator: [talc](https://docs.rs/talc), fed
//! first with the initial memory above the module's data (`__heap_base` to
//! the memory's end), then with pages grown one request at a time.
//!
//! Rust's default allocator on `wasm32-unknown-unknown` (dlmalloc) leaves
//! that space unused and grows memory for its first allocation; every check
//! runs in a fresh instance, so every check paid for a `memory.grow` (and
//! the host for taking the grown pages back afterwards). Turn off the
//! `lean-allocator` feature to bring your own `#[global_allocator]`.

// A global allocator cannot be written without `unsafe`: handing memory to
// the allocator is unsafe by nature (talc's `claim`/`extend`), as is naming
// the linker's `__heap_base` symbol.
#![allow(unsafe_code)]

use core::alloc::Layout;
use core::arch::wasm32::{memory_grow, memory_size};
use core::ptr::NonNull;
use talc::base::Talc;
use talc::base::binning::Binning;
use talc::cell::TalcSyncCell;
use talc::source::Source;
use talc::wasm::WasmBinning;

/// A WebAssembly page.
const PAGE: usize = 64 * 1024;

/// Room talc needs beside an allocation in a heap it is given (chunk
/// headers and alignment), generously.
const OVERHEAD: usize = 256;

unsafe extern "C" {
    /// Where the module's static data ends and nothing else owns memory: put
    /// there by the linker (wasm-ld). Only its address is used.
    static __heap_base: u8;
}

/// The memory source: the initial memory's free tail, then grown pages.
#[derive(Debug)]
pub(crate) struct InitialThenGrow {
    /// Whether the initial memory was handed over yet.
    started: bool,
    /// The end of the last heap, to extend it when grown pages follow it.
    end: Option<NonNull<u8>>,
}

// SAFETY: `acquire` uses no allocator and touches `talc` only through the
// reference it is given; the memory it claims is owned by nobody else: the
// initial memory above `__heap_base` is where the linker leaves the heap
// (the stack and static data lie below it), and pages returned by
// `memory.grow` are new.
unsafe impl Source for InitialThenGrow {
    fn acquire<B: Binning>(talc: &mut Talc<Self, B>, layout: Layout) -> Result<(), ()> {
        if !talc.source.started {
            talc.source.started = true;
            let base = (&raw const __heap_base).addr();
            let end = memory_size(0) * PAGE;
            if end > base {
                // SAFETY: see the impl: nobody else owns [base, end).
                talc.source.end = unsafe { talc.claim(base as *mut u8, end - base) };
                if talc.source.end.is_some() {
                    return Ok(());
                }
            }
        }
        let bytes = layout
            .size()
            .checked_add(layout.align())
            .and_then(|n| n.checked_add(OVERHEAD))
            .ok_or(())?;
        let pages = bytes.div_ceil(PAGE);
        let previous = memory_grow(0, pages);
        if previous == usize::MAX {
            return Err(());
        }
        let grown = (previous * PAGE) as *mut u8;
        let size = pages * PAGE;
        if let Some(end) = talc.source.end.take()
            && end.as_ptr() == grown
        {
            // SAFETY: the grown pages start where this heap ends.
            talc.source.end = Some(unsafe { talc.extend(end, grown.wrapping_add(size)) });
            return Ok(());
        }
        // SAFETY: the pages were just grown: nobody else owns them.
        talc.source.end = unsafe { talc.claim(grown, size) };
        talc.source.end.map(|_| ()).ok_or(())
    }
}

/// Single-threaded WebAssembly: talc's lock-free cell is sound here (its
/// constructor panics at compile time anywhere else).
#[global_allocator]
static ALLOCATOR: TalcSyncCell<InitialThenGrow, WasmBinning> =
    TalcSyncCell::new_wasm(InitialThenGrow {
        started: false,
        end: None,
    });
