//! Compiling in a child process bounded in memory and time.
//!
//! The load census refuses what it can estimate; whatever shape it misses,
//! a compile in a child is still bounded: the child limits its own data
//! segment (`RLIMIT_DATA`: the heap and every private writable mapping,
//! including the compiled code before it is made executable) and the parent
//! kills it at a deadline. The child reads the component on its standard
//! input and writes wasmtime's serialized artifact on its standard output;
//! the parent deserializes only that output, read from the pipe of the
//! process it started for this load: with a compile cache, copied into a
//! new file of the cache's private directory, mapped from there and then
//! renamed into place as the entry (the parent never holds the artifact in
//! memory); without one, through memory. `RLIMIT_DATA` rather than `RLIMIT_AS`: the address space also
//! counts reservations nobody touches (glibc reserves 64 MiB per thread's
//! malloc arena), so it fails ordinary compiles long before memory is used.
//!
//! Outcomes are classified from typed data only: our own deadline (time),
//! the child's exit status (the codes below) and the signal that ended it
//! (an allocation that fails under the limit aborts, a thread stack that
//! cannot be mapped faults, the kernel's OOM killer kills: memory).

use crate::error::LoadError;
use crate::load::tier::Tier;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Where a host compiles the components it loads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompileIn {
    /// In the host's own process (bounded by the census estimate only).
    /// The default for a library.
    #[default]
    Process,
    /// In a child process bounded in memory and time (the `verdict` CLI's
    /// default).
    Child(ChildCompiler),
}

/// How to start a compile child, and its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildCompiler {
    /// The program to run: a binary whose `args` make it call
    /// [`compile_child_main`] (e.g. the embedder's own binary, re-executed
    /// with a hidden subcommand).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The child's data-segment limit (`RLIMIT_DATA`), in bytes: a compile
    /// that needs more fails and the load is refused naming
    /// `compile_memory_bytes`. Default 768 MiB (the componentize-py and
    /// componentize-js samples peak at 370–375 MiB resident, and fail
    /// under a 384 MiB limit but not under 512 MiB).
    pub memory_bytes: u64,
    /// Wall-clock deadline of the compile (the child is killed at it and
    /// the load refused naming `compile_timeout_ms`). Default 30 s (the
    /// componentize-js sample compiles in about 2 s, a debug build of the
    /// host takes ten times longer).
    pub timeout: Duration,
    /// Compile threads in the child (`None`: one per core). Fewer threads
    /// need less memory at once.
    pub threads: Option<usize>,
}

impl ChildCompiler {
    /// Runs `program args...` with the default bounds.
    pub fn new(program: impl Into<PathBuf>, args: Vec<OsString>) -> Self {
        Self {
            program: program.into(),
            args,
            memory_bytes: 768 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            threads: None,
        }
    }
}

/// The compiler a child uses, as the environment tells it.
const TIER_ENV: &str = "VERDICT_COMPILE_CHILD_TIER";
/// The child's memory limit, in bytes.
const MEMORY_ENV: &str = "VERDICT_COMPILE_CHILD_MEMORY";
/// The process id of the host that started the child.
const PARENT_ENV: &str = "VERDICT_COMPILE_CHILD_PARENT";

/// Exit status: wasmtime refused the component (its message on stderr).
const EXIT_REFUSED: u8 = 65;
/// Exit status: the child was started wrong (no tier, no engine).
const EXIT_USAGE: u8 = 64;
/// Exit status: the input or output pipe failed.
const EXIT_IO: u8 = 74;

/// A compile child's whole work: call it from the binary
/// [`ChildCompiler::program`] runs (and nothing else in that process) and
/// return its exit code from `main`. It limits its own memory, reads a
/// component on standard input, compiles it for the tier its parent named,
/// and writes the serialized artifact on standard output.
pub fn compile_child_main() -> ExitCode {
    let tier = match std::env::var(TIER_ENV)
        .ok()
        .as_deref()
        .and_then(Tier::from_name)
    {
        Some(tier) => tier,
        None => {
            eprintln!("not started by a verdict host: {TIER_ENV} is not set");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    // Killed with the thread that started it (which waits for it): a
    // compile never outlives the host that asked for it.
    #[cfg(target_os = "linux")]
    if let Err(err) = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL) {
        eprintln!("cannot tie the compile to its host: {err}");
        return ExitCode::from(EXIT_USAGE);
    }
    // A host that died before the line above: no signal will come.
    if let Some(parent) = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        && nix::unistd::getppid().as_raw() != parent
    {
        eprintln!("the host that started this compile is gone");
        return ExitCode::from(EXIT_USAGE);
    }
    if let Some(bytes) = std::env::var(MEMORY_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        use nix::sys::resource::{Resource, setrlimit};
        if let Err(err) = setrlimit(Resource::RLIMIT_DATA, bytes, bytes) {
            eprintln!("cannot limit the compile's memory: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    }
    let engine = match wasmtime::Engine::new(&tier.engine_config()) {
        Ok(engine) => engine,
        Err(err) => {
            eprintln!("cannot start the compiler: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut bytes = Vec::new();
    if std::io::stdin().lock().read_to_end(&mut bytes).is_err() {
        return ExitCode::from(EXIT_IO);
    }
    match engine.precompile_component(&bytes) {
        Ok(artifact) => {
            drop(bytes);
            let mut out = std::io::stdout().lock();
            if out.write_all(&artifact).and_then(|()| out.flush()).is_err() {
                return ExitCode::from(EXIT_IO);
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("{err}");
            ExitCode::from(EXIT_REFUSED)
        }
    }
}

/// Where a compile child's output goes.
pub(crate) enum Sink {
    /// Into memory.
    Memory,
    /// Into this file (a new one in the private compile cache), hashed on
    /// the way for the cache's checksum.
    File(std::fs::File),
}

/// A compile child's output.
pub(crate) enum Artifact {
    /// Held in memory.
    Memory(Vec<u8>),
    /// Written to the [`Sink::File`], with its XXH3-128 checksum.
    File {
        /// The checksum of what was written.
        sum: u128,
    },
}

/// Copies at most `most` bytes of `from` into `sink`.
fn drain(from: impl Read, most: u64, sink: Sink) -> std::io::Result<Artifact> {
    let mut from = from.take(most);
    match sink {
        Sink::Memory => {
            let mut out = Vec::new();
            from.read_to_end(&mut out)?;
            Ok(Artifact::Memory(out))
        }
        Sink::File(mut file) => {
            let mut hasher = twox_hash::XxHash3_128::new();
            let mut buffer = vec![0u8; 64 * 1024];
            loop {
                let n = match from.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                let chunk = buffer.get(..n).unwrap_or_default();
                hasher.write(chunk);
                file.write_all(chunk)?;
            }
            file.flush()?;
            Ok(Artifact::File {
                sum: hasher.finish_128(),
            })
        }
    }
}

/// The most of a child's stderr kept (for a refusal's message).
const STDERR_KEPT: u64 = 4096;

/// Compiles `bytes` for `tier` in a child started as `child` says: the
/// serialized artifact (in memory or written to `sink`), or why not.
pub(crate) fn compile(
    child: &ChildCompiler,
    tier: Tier,
    bytes: &[u8],
    sink: Sink,
) -> Result<Artifact, LoadError> {
    let io = |what: &str, e: std::io::Error| {
        LoadError::Io(format!("the compile child: {what}: {}", e.kind()))
    };
    let mut command = Command::new(&child.program);
    command
        .args(&child.args)
        .env(TIER_ENV, tier.name())
        .env(MEMORY_ENV, child.memory_bytes.to_string())
        .env(PARENT_ENV, std::process::id().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(threads) = child.threads {
        command.env("RAYON_NUM_THREADS", threads.max(1).to_string());
    }
    let started = Instant::now();
    let mut process = command.spawn().map_err(|e| io("cannot start it", e))?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) = (
        process.stdin.take(),
        process.stdout.take(),
        process.stderr.take(),
    ) else {
        let _ = process.kill();
        let _ = process.wait();
        return Err(LoadError::Io("the compile child has no pipes".into()));
    };
    // The pipes are served by threads, so a child that stops reading or
    // writing cannot hold the deadline up.
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    // The artifact cannot be larger than the memory the child had.
    let most = child.memory_bytes;
    let reader = std::thread::spawn(move || drain(stdout, most, sink));
    let errors = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stderr.take(STDERR_KEPT).read_to_end(&mut out);
        out
    });
    let deadline = started + child.timeout;
    let status = loop {
        match process
            .try_wait()
            .map_err(|e| io("cannot wait for it", e))?
        {
            Some(status) => break Some(status),
            None if Instant::now() >= deadline => break None,
            None => std::thread::sleep(Duration::from_millis(2)),
        }
    };
    let Some(status) = status else {
        let _ = process.kill();
        let _ = process.wait();
        // The pipe threads end as the pipes close; not waited for, in case
        // something the child started holds them open.
        drop((writer, reader, errors));
        return Err(LoadError::CompileBound {
            bound: "compile_timeout_ms",
            max: u64::try_from(child.timeout.as_millis()).unwrap_or(u64::MAX),
        });
    };
    let _ = writer.join();
    let artifact = reader
        .join()
        .map_err(|_| LoadError::Io("the compile child's output was lost".into()))?;
    let message = errors.join().unwrap_or_default();
    tracing::debug!(elapsed = ?started.elapsed(), %status, "compile child finished");
    classify(status, child.memory_bytes)?;
    if status.code() == Some(i32::from(EXIT_REFUSED)) {
        return Err(LoadError::Corrupt(
            String::from_utf8_lossy(&message).trim().to_owned(),
        ));
    }
    let artifact = artifact.map_err(|e| io("cannot read its output", e))?;
    match status.code() {
        Some(0) => Ok(artifact),
        code => Err(LoadError::Link(format!(
            "the compile child failed (exit status {})",
            code.map_or_else(|| "unknown".to_owned(), |c| c.to_string())
        ))),
    }
}

/// A child ended by a signal: over its memory (an allocation that failed
/// aborts it, a stack it cannot map faults, the OOM killer kills), or
/// stopped by someone else.
fn classify(status: std::process::ExitStatus, memory_bytes: u64) -> Result<(), LoadError> {
    use std::os::unix::process::ExitStatusExt;
    let Some(signal) = status.signal() else {
        return Ok(());
    };
    match nix::sys::signal::Signal::try_from(signal) {
        Ok(
            nix::sys::signal::Signal::SIGABRT
            | nix::sys::signal::Signal::SIGSEGV
            | nix::sys::signal::Signal::SIGBUS
            | nix::sys::signal::Signal::SIGKILL,
        ) => Err(LoadError::CompileBound {
            bound: "compile_memory_bytes",
            max: memory_bytes,
        }),
        _ => Err(LoadError::Link(format!(
            "the compile child was stopped by signal {signal}"
        ))),
    }
}
