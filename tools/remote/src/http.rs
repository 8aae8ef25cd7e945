//! [`HttpBytes`]: a pack's bytes over HTTP range requests.
//!
//! The key decision: every read is served from aligned blocks, and every
//! run of consecutive missing blocks is one `Range` request, so the reads a
//! frame needs (or a [`PackBytes::prefetch`] names) cost as few requests as
//! their placement allows. A response is accepted only whole: status 206,
//! the `Content-Range` asked for, the pack's total length, the validator
//! seen at open, and exactly the bytes announced; anything transient is
//! retried with backoff, anything else is an error naming the URL and range.

use std::borrow::Cow;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use planet_terrain::pack::{FetchFailure, PackBytes, PackError};

use crate::cache::BlockCache;
use crate::{BLOCK_BYTES, RemoteError, RemoteOptions};

/// The most blocks one request asks for (4 MiB).
const MAX_RUN_BLOCKS: usize = 256;

/// What a remote pack cost so far.
#[derive(Debug, Default)]
pub struct TransferStats {
    requests: AtomicU64,
    bytes: AtomicU64,
    retries: AtomicU64,
}

impl TransferStats {
    /// Range requests answered in full.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
    /// Body bytes received in answers accepted.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
    /// Attempts that failed transiently and were repeated.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }
}

/// The validator a response carries.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Validator {
    header: &'static str,
    value: String,
}

/// A remote pack's bytes.
#[derive(Debug)]
pub struct HttpBytes {
    url: String,
    agent: ureq::Agent,
    length: u64,
    validator: Validator,
    cache: BlockCache,
    stats: Arc<TransferStats>,
    options: RemoteOptions,
    outage: Mutex<Option<Outage>>,
}

/// A server that just failed a read past its retries, waited out: until
/// `until` reads fail at once naming it, rather than each spending its own
/// retries and deadline (a shot's 64 tiles over a server gone slow waited
/// 32 deadlines in a row on each of two threads, minutes without a word).
/// The first wait is as long as the failed read took (at least
/// [`OUTAGE_SHORTEST`]); each failure after it doubles it up to
/// [`OUTAGE_LONGEST`]; an answer ends the outage.
#[derive(Debug)]
struct Outage {
    failure: FetchFailure,
    last: String,
    until: Instant,
    wait: Duration,
}

const OUTAGE_SHORTEST: Duration = Duration::from_secs(1);
const OUTAGE_LONGEST: Duration = Duration::from_secs(60);

/// One failed attempt: whether trying again may help, and whether it was
/// a timeout (the server slow rather than failing).
enum Attempt {
    Transient { reason: String, timeout: bool },
    Fatal(RemoteError),
}

fn transient(reason: String) -> Attempt {
    Attempt::Transient { reason, timeout: false }
}

/// Whether an I/O error out of ureq is one of its timeouts.
fn is_timeout(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::TimedOut
        || e.get_ref()
            .and_then(|inner| inner.downcast_ref::<ureq::Error>())
            .is_some_and(|u| matches!(u, ureq::Error::Timeout(_)))
}

/// Longest wait for a connection: a host that does not answer at all is
/// told apart from a slow one early.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// An accepted range response.
struct Answer {
    total: u64,
    validator: Validator,
    body: Vec<u8>,
}

impl HttpBytes {
    /// Learns the pack's length and validator from its first blocks (the
    /// header and root directory: the bytes opening reads anyway).
    pub fn open(url: &str, options: &RemoteOptions) -> Result<HttpBytes, RemoteError> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(options.timeout))
            .timeout_connect(Some(options.timeout.min(CONNECT_TIMEOUT)))
            .http_status_as_error(false)
            .build()
            .into();
        let stats = Arc::new(TransferStats::default());
        let first = fetch(&agent, url, 0, 2 * BLOCK_BYTES, None, options, &stats)?;
        let cache = BlockCache::new(
            url,
            &first.validator.value,
            options.memory_bytes,
            options.cache_dir.as_deref().map(|dir| (dir, options.cache_bytes)),
        )?;
        let bytes = HttpBytes {
            url: url.to_owned(),
            agent,
            length: first.total,
            validator: first.validator,
            cache,
            stats,
            options: options.clone(),
            outage: Mutex::new(None),
        };
        bytes.keep(0, &first.body);
        Ok(bytes)
    }

    pub fn stats(&self) -> Arc<TransferStats> {
        Arc::clone(&self.stats)
    }

    /// Splits a fetched span starting at block `first` into blocks, cached.
    fn keep(&self, first: u64, body: &[u8]) -> Vec<Arc<Vec<u8>>> {
        let blocks: Vec<Arc<Vec<u8>>> = body.chunks(BLOCK_BYTES as usize).map(|c| Arc::new(c.to_vec())).collect();
        for (k, block) in blocks.iter().enumerate() {
            self.cache.put(first + k as u64, Arc::clone(block));
        }
        blocks
    }

    /// Makes blocks `first..=last` present, one request per run of missing
    /// blocks.
    fn ensure(&self, first: u64, last: u64) -> Result<Vec<Arc<Vec<u8>>>, RemoteError> {
        let mut blocks: Vec<Option<Arc<Vec<u8>>>> = (first..=last).map(|k| self.cache.get(k)).collect();
        let mut k = 0;
        while k < blocks.len() {
            if blocks[k].is_some() {
                k += 1;
                continue;
            }
            // A run of missing blocks, at most `MAX_RUN_BLOCKS` long: one
            // request stays bounded in time and memory.
            let run_end =
                (k..blocks.len()).find(|&j| blocks[j].is_some() || j - k == MAX_RUN_BLOCKS).unwrap_or(blocks.len());
            let start = (first + k as u64) * BLOCK_BYTES;
            let end = ((first + run_end as u64) * BLOCK_BYTES).min(self.length);
            let answer = self.fetch_unless_out(start, end)?;
            if answer.total != self.length {
                return Err(RemoteError::Changed {
                    url: self.url.clone(),
                    header: "length",
                    was: self.length.to_string(),
                    now: answer.total.to_string(),
                });
            }
            for (j, block) in self.keep(first + k as u64, &answer.body).into_iter().enumerate() {
                blocks[k + j] = Some(block);
            }
            k = run_end;
        }
        Ok(blocks.into_iter().map(|b| b.expect("every block fetched")).collect())
    }
}

impl HttpBytes {
    fn outage(&self) -> MutexGuard<'_, Option<Outage>> {
        // A reader that panicked holding it left a consistent value.
        self.outage.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Bytes `start..end`, unless the server is being waited out
    /// ([`Outage`]); a failure past the retries starts or lengthens one.
    fn fetch_unless_out(&self, start: u64, end: u64) -> Result<Answer, RemoteError> {
        if let Some(outage) = self.outage().as_ref() {
            let now = Instant::now();
            if now < outage.until {
                return Err(RemoteError::Unavailable {
                    url: self.url.clone(),
                    failure: outage.failure,
                    last: outage.last.clone(),
                    retry_in_s: (outage.until - now).as_secs_f64(),
                });
            }
        }
        let asked = Instant::now();
        let result = fetch(&self.agent, &self.url, start, end, Some(&self.validator), &self.options, &self.stats);
        match &result {
            Ok(_) => *self.outage() = None,
            Err(RemoteError::Request { failure, start, end, attempts, reason, .. }) => {
                let mut outage = self.outage();
                let wait = match outage.as_ref() {
                    Some(before) => before.wait * 2,
                    None => asked.elapsed().max(OUTAGE_SHORTEST),
                };
                let wait = wait.min(OUTAGE_LONGEST);
                let last = format!("bytes {start}..{end}: {reason} (after {attempts} attempts)");
                *outage = Some(Outage { failure: *failure, last, until: Instant::now() + wait, wait });
            }
            Err(_) => {}
        }
        result
    }
}

fn to_pack_error(e: RemoteError) -> PackError {
    let asked = !matches!(e, RemoteError::Unavailable { .. });
    PackError::Fetch { failure: e.failure(), asked, message: e.to_string() }
}

impl PackBytes for HttpBytes {
    fn len(&self) -> u64 {
        self.length
    }

    fn read(&self, offset: u64, length: usize) -> Result<Cow<'_, [u8]>, PackError> {
        if length == 0 {
            return Ok(Cow::Owned(Vec::new()));
        }
        let end = offset + length as u64;
        let (first, last) = (offset / BLOCK_BYTES, (end - 1) / BLOCK_BYTES);
        let blocks = self.ensure(first, last).map_err(to_pack_error)?;
        let mut out = Vec::with_capacity(length);
        for (k, block) in blocks.iter().enumerate() {
            let block_start = (first + k as u64) * BLOCK_BYTES;
            let from = offset.saturating_sub(block_start) as usize;
            let to = ((end - block_start) as usize).min(block.len());
            out.extend_from_slice(&block[from..to]);
        }
        Ok(Cow::Owned(out))
    }

    fn prefetch(&self, ranges: &[(u64, usize)]) -> Result<(), PackError> {
        // The blocks the ranges touch, merged into runs; `ensure` then asks
        // once per run of blocks still missing.
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for &(offset, length) in ranges.iter().filter(|r| r.1 > 0) {
            let (first, last) = (offset / BLOCK_BYTES, (offset + length as u64 - 1) / BLOCK_BYTES);
            match runs.last_mut() {
                Some(run) if first <= run.1 + 1 => run.1 = run.1.max(last),
                _ => runs.push((first, last)),
            }
        }
        for (first, last) in runs {
            self.ensure(first, last).map_err(to_pack_error)?;
        }
        Ok(())
    }
}

/// One range request with retries: bytes `start..end` of `url`.
fn fetch(
    agent: &ureq::Agent,
    url: &str,
    start: u64,
    end: u64,
    expect: Option<&Validator>,
    options: &RemoteOptions,
    stats: &TransferStats,
) -> Result<Answer, RemoteError> {
    let mut wait = options.backoff;
    let mut attempts = 0;
    let started = std::time::Instant::now();
    loop {
        attempts += 1;
        // No attempt runs past the read's deadline.
        let left = options.deadline.saturating_sub(started.elapsed());
        match attempt(agent, url, start, end, expect, options.timeout.min(left)) {
            Ok(answer) => {
                stats.requests.fetch_add(1, Ordering::Relaxed);
                stats.bytes.fetch_add(answer.body.len() as u64, Ordering::Relaxed);
                return Ok(answer);
            }
            Err(Attempt::Fatal(e)) => return Err(e),
            Err(Attempt::Transient { reason, timeout }) if attempts > options.retries => {
                let failure = if timeout { FetchFailure::Slow } else { FetchFailure::Failing };
                return Err(RemoteError::Request { url: url.to_owned(), failure, start, end, attempts, reason });
            }
            Err(Attempt::Transient { reason, .. }) if started.elapsed() + wait >= options.deadline => {
                let reason = format!("{reason}; gave up at the {:?} deadline of one read", options.deadline);
                let failure = FetchFailure::Slow;
                return Err(RemoteError::Request { url: url.to_owned(), failure, start, end, attempts, reason });
            }
            Err(Attempt::Transient { .. }) => {
                stats.retries.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(10));
            }
        }
    }
}

fn attempt(
    agent: &ureq::Agent,
    url: &str,
    start: u64,
    end: u64,
    expect: Option<&Validator>,
    timeout: Duration,
) -> Result<Answer, Attempt> {
    let mut response = agent
        .get(url)
        .config()
        .timeout_global(Some(timeout))
        .build()
        .header("Range", format!("bytes={start}-{}", end - 1))
        .call()
        .map_err(|e| Attempt::Transient { timeout: matches!(e, ureq::Error::Timeout(_)), reason: e.to_string() })?;
    check_status(url, response.status().as_u16(), start, end, expect.is_some())?;
    let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let validator = match (header("etag"), header("last-modified")) {
        (Some(value), _) => Validator { header: "ETag", value },
        (None, Some(value)) => Validator { header: "Last-Modified", value },
        (None, None) => return Err(Attempt::Fatal(RemoteError::NoValidator { url: url.to_owned() })),
    };
    if let Some(expected) = expect
        && *expected != validator
    {
        return Err(Attempt::Fatal(RemoteError::Changed {
            url: url.to_owned(),
            header: expected.header,
            was: expected.value.clone(),
            now: validator.value,
        }));
    }
    let range = header("content-range").unwrap_or_default();
    let (span, total) = range.strip_prefix("bytes ").and_then(|r| r.split_once('/')).ok_or_else(|| {
        Attempt::Fatal(RemoteError::NoRanges { url: url.to_owned(), reason: format!("Content-Range '{range}'") })
    })?;
    let total: u64 = total.parse().map_err(|_| {
        Attempt::Fatal(RemoteError::NoRanges {
            url: url.to_owned(),
            reason: format!("Content-Range '{range}' has no length"),
        })
    })?;
    let expected_end = end.min(total);
    if span != format!("{start}-{}", expected_end - 1) {
        return Err(Attempt::Fatal(RemoteError::NoRanges {
            url: url.to_owned(),
            reason: format!("asked for bytes {start}-{}, got Content-Range '{range}'", end - 1),
        }));
    }
    let wanted = (expected_end - start) as usize;
    let mut body = Vec::with_capacity(wanted);
    let read = response.body_mut().as_reader().take(wanted as u64 + 1).read_to_end(&mut body);
    if let Err(e) = read {
        return Err(Attempt::Transient { timeout: is_timeout(&e), reason: format!("the body broke off: {e}") });
    }
    if body.len() != wanted {
        return Err(transient(format!("a body of {} bytes where {wanted} were announced (truncated)", body.len())));
    }
    Ok(Answer { total, validator, body })
}

/// What a range answer's status means: 206 goes on; anything else is a
/// failure, transient or not. `opened`: the pack was opened before this.
fn check_status(url: &str, status: u16, start: u64, end: u64, opened: bool) -> Result<(), Attempt> {
    match status {
        206 => Ok(()),
        500..=599 | 429 | 408 => Err(transient(format!("HTTP {status}"))),
        200 => Err(Attempt::Fatal(RemoteError::NoRanges {
            url: url.to_owned(),
            reason: "it answered 200 with the whole file to a range request".into(),
        })),
        // The pack was there when opened: gone now is a change, not a
        // failure to wait out.
        404 | 410 if opened => Err(Attempt::Fatal(RemoteError::Changed {
            url: url.to_owned(),
            header: "status",
            was: "206 (opened)".into(),
            now: format!("HTTP {status}, the pack is gone"),
        })),
        _ => Err(Attempt::Fatal(RemoteError::Request {
            url: url.to_owned(),
            failure: FetchFailure::Failing,
            start,
            end,
            attempts: 1,
            reason: format!("HTTP {status}"),
        })),
    }
}
