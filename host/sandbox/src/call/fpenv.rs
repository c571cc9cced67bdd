//! Running guests in the floating-point environment WebAssembly defines.
//!
//! Wasm's `f32`/`f64` arithmetic is IEEE 754 with subnormals, rounding to
//! nearest, and no traps. On x86-64 Cranelift compiles it to SSE
//! instructions, which follow the polling thread's MXCSR register, and
//! neither wasmtime nor the kernel resets it: a call runs in whatever
//! environment its caller's thread has. Real hosts change it: code built with
//! `-ffast-math` sets flush-to-zero and denormals-are-zero for the whole
//! process when it is loaded (`crtfastmath`), audio and DSP code sets them on
//! its threads, numeric code changes the rounding mode or unmasks
//! exceptions, and a thread a call moves to inherits its creator's MXCSR.
//! Measured: a guest adding a subnormal to itself got 0 from a caller with
//! FTZ|DAZ set, and answered the opposite verdict.
//!
//! [`WasmFloats`] is held for each poll of a call (the only place guest
//! code runs; see [`crate::call::handoff`]): it sets MXCSR's control bits to the
//! processor's default when they differ (all exceptions masked, round to
//! nearest, no FTZ or DAZ) and restores the thread's own value when the
//! poll returns. A thread already in the
//! default environment pays one `stmxcsr` per poll.
//!
//! Like the crate's other `unsafe` (wasmtime's component traits, loading
//! cached code), the two instructions below are something wasmtime requires
//! of its embedder: it runs guest floats in the thread's environment and
//! leaves establishing WebAssembly's to the host. No maintained crate offers
//! a safe way to set it.
//!
//! Other architectures are left as they are (on AArch64 the equivalent is
//! FPCR's FZ and RMode bits); this host is built and tested on x86-64.

/// WebAssembly's floating-point environment on this thread until dropped.
pub(crate) struct WasmFloats {
    /// The thread's own MXCSR, when it was not the default.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    restore: Option<u32>,
}

#[cfg(target_arch = "x86_64")]
mod mxcsr {
    use std::arch::asm;

    /// MXCSR's control bits: DAZ (6), the six exception masks (7–12), the
    /// rounding control (13–14) and FTZ (15).
    pub(super) const CONTROL: u32 = 0xFFC0;
    /// Their power-on default: every exception masked, round to nearest,
    /// FTZ and DAZ off (Intel SDM vol. 1, 10.2.3.1).
    pub(super) const DEFAULT: u32 = 0x1F80;

    /// The thread's MXCSR.
    pub(super) fn read() -> u32 {
        let mut csr: u32 = 0;
        // SAFETY: `stmxcsr` stores the 4-byte MXCSR at the address given,
        // which is `csr`, a live, aligned local; it changes nothing else.
        #[allow(unsafe_code)]
        unsafe {
            asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack, preserves_flags));
        }
        csr
    }

    /// Sets the thread's MXCSR to `csr`: a value read from MXCSR, or one
    /// with only its control bits replaced by [`DEFAULT`]'s.
    pub(super) fn write(csr: u32) {
        // SAFETY: `ldmxcsr` loads MXCSR from the address given, `csr`, a
        // live, aligned local. It faults only on a reserved bit set, and
        // every value written is one read from MXCSR (reserved bits as the
        // processor keeps them) or such a value with bits 6–15 replaced by
        // the architectural default. The Rust code around a guest then runs
        // in the default environment, the one the compiler assumes; the
        // caller gets its own environment back, as it had set it.
        #[allow(unsafe_code)]
        unsafe {
            asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, preserves_flags, readonly));
        }
    }
}

impl WasmFloats {
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn enter() -> Self {
        let before = mxcsr::read();
        if before & mxcsr::CONTROL == mxcsr::DEFAULT {
            return Self { restore: None };
        }
        mxcsr::write((before & !mxcsr::CONTROL) | mxcsr::DEFAULT);
        Self {
            restore: Some(before),
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub(crate) fn enter() -> Self {
        Self { restore: None }
    }
}

impl Drop for WasmFloats {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        if let Some(before) = self.restore.take() {
            mxcsr::write(before);
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// FTZ, DAZ, rounding toward zero and the divide-by-zero exception
    /// unmasked: what a fast-math or numeric caller may leave on its thread.
    const HOSTILE: u32 = (mxcsr::DEFAULT | 0x8040 | 0x6000) & !0x0200;

    #[test]
    fn a_poll_runs_in_the_default_environment_and_restores_the_callers() {
        let seen = std::thread::spawn(|| {
            mxcsr::write(HOSTILE);
            let during = {
                let _floats = WasmFloats::enter();
                mxcsr::read() & mxcsr::CONTROL
            };
            let after = mxcsr::read() & mxcsr::CONTROL;
            mxcsr::write(mxcsr::DEFAULT);
            (during, after)
        })
        .join();
        let Ok((during, after)) = seen else {
            panic!("the thread panicked")
        };
        assert_eq!(during, mxcsr::DEFAULT, "{during:#x} during the poll");
        assert_eq!(after, HOSTILE & mxcsr::CONTROL, "{after:#x} after the poll");
    }

    #[test]
    fn a_default_thread_is_left_as_it_is() {
        let seen = std::thread::spawn(|| {
            let control = || mxcsr::read() & mxcsr::CONTROL;
            let before = control();
            let during = {
                let _floats = WasmFloats::enter();
                control()
            };
            (before, during, control())
        })
        .join();
        let Ok((before, during, after)) = seen else {
            panic!("the thread panicked")
        };
        assert_eq!([before, during, after], [mxcsr::DEFAULT; 3]);
    }
}
