//! HTTP servers for tests, on loopback, started and stopped by the test.
//!
//! Two of them, on purpose: [`Nginx`] is Debian's nginx with a config of
//! its own in a temporary directory (a real, independent implementation of
//! ranges, ETag and keep-alive, so the client is not only tested against
//! code written beside it), and [`FaultServer`] is a small range server
//! whose answers a test can break on demand (5xx, truncated bodies, delays,
//! ignored ranges, a file replaced), which no stock server does.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Debian's nginx serving `root` on a free loopback port.
#[derive(Debug)]
pub struct Nginx {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free loopback port")
}

impl Nginx {
    /// Starts nginx (`/usr/sbin/nginx`, from `tools/deps.sh`) serving the
    /// files of `root`; waits until it accepts connections.
    pub fn serve(root: &Path) -> Nginx {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let port = free_port();
        let conf = dir.path().join("nginx.conf");
        let d = dir.path().display();
        std::fs::write(
            &conf,
            format!(
                "daemon off;\nmaster_process off;\nworker_processes 1;\nerror_log {d}/error.log;\npid {d}/nginx.pid;\n\
                 events {{ worker_connections 64; }}\n\
                 http {{\n  access_log {d}/access.log;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
                   fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
                   keepalive_requests 10000;\n\
                   server {{\n    listen 127.0.0.1:{port};\n    root {};\n  }}\n}}\n",
                root.display()
            ),
        )
        .expect("writing nginx.conf");
        let mut child = Command::new("/usr/sbin/nginx")
            .args(["-c", conf.to_str().expect("UTF-8 path"), "-p", &d.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx must be installed (tools/deps.sh installs nginx-light)");
        for _ in 0..200 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Nginx { child, port, _dir: dir };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("nginx did not start on port {port}: see {d}/error.log");
    }

    /// The URL of `name` under the served root.
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }

    /// Requests nginx logged so far (one line each). nginx writes a line
    /// after it answered, so a count taken right after a client's last
    /// answer may lack it: see [`Nginx::requests_logged_reaching`].
    pub fn requests_logged(&self) -> usize {
        std::fs::read_to_string(self._dir.path().join("access.log")).map_or(0, |s| s.lines().count())
    }

    /// The logged count once it reaches `at_least`, or after two seconds,
    /// whatever it is then.
    pub fn requests_logged_reaching(&self, at_least: usize) -> usize {
        for _ in 0..100 {
            let n = self.requests_logged();
            if n >= at_least {
                return n;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.requests_logged()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the next answers of a [`FaultServer`] do wrong.
#[derive(Debug, Default)]
pub struct Faults {
    /// Answer this many requests normally before any fault applies.
    pub pass_first: AtomicU32,
    /// Answer this many requests with 503.
    pub fail_next: AtomicU32,
    /// Send half of the body of this many answers, then close.
    pub truncate_next: AtomicU32,
    /// Wait this long (milliseconds) before the delayed answers.
    pub delay_ms: AtomicU64,
    /// Delay this many answers by `delay_ms`.
    pub delay_next: AtomicU32,
    /// Delay every answer by `delay_ms`.
    pub delay_all: AtomicBool,
    /// Answer ranges with the whole file (200).
    pub ignore_ranges: AtomicBool,
    /// The Nth answer from now on, and every one after it, carries a new
    /// ETag (the same bytes): a pack replaced mid-session; 0 never.
    pub change_after: AtomicU32,
}

fn take_one(counter: &AtomicU32) -> bool {
    counter.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
}

/// A keep-alive range server for one file, with faults on demand.
#[derive(Debug)]
pub struct FaultServer {
    port: u16,
    pub faults: Arc<Faults>,
    content: Arc<Mutex<(Arc<Vec<u8>>, u32)>>,
    stop: Arc<AtomicBool>,
    /// Connections accepted so far.
    pub connections: Arc<AtomicU32>,
}

impl FaultServer {
    /// Serves `bytes` at `/pack` (any path) with ETag `"v1"`.
    pub fn serve(bytes: Vec<u8>) -> FaultServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding loopback");
        let port = listener.local_addr().expect("address").port();
        let server = FaultServer {
            port,
            faults: Arc::new(Faults::default()),
            content: Arc::new(Mutex::new((Arc::new(bytes), 1))),
            stop: Arc::new(AtomicBool::new(false)),
            connections: Arc::new(AtomicU32::new(0)),
        };
        let (faults, content, stop, connections) = (
            Arc::clone(&server.faults),
            Arc::clone(&server.content),
            Arc::clone(&server.stop),
            Arc::clone(&server.connections),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                connections.fetch_add(1, Ordering::SeqCst);
                let (faults, content) = (Arc::clone(&faults), Arc::clone(&content));
                std::thread::spawn(move || {
                    let _ = serve_connection(stream, &faults, &content);
                });
            }
        });
        server
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/pack", self.port)
    }

    /// Replaces the file: new bytes under a new ETag.
    pub fn replace(&self, bytes: Vec<u8>) {
        let mut content = self.content.lock().expect("content lock");
        content.1 += 1;
        content.0 = Arc::new(bytes);
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve_connection(stream: TcpStream, faults: &Faults, content: &Mutex<(Arc<Vec<u8>>, u32)>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    loop {
        let mut range: Option<(u64, Option<u64>)> = None;
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        loop {
            let mut header = String::new();
            reader.read_line(&mut header)?;
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some(value) = header.strip_prefix("range: ").or_else(|| header.strip_prefix("Range: ")) {
                let spec = value.trim().trim_start_matches("bytes=");
                if let Some((a, b)) = spec.split_once('-') {
                    range = a.parse().ok().map(|a| (a, b.parse().ok()));
                }
            }
        }
        let passing = take_one(&faults.pass_first);
        let delay = faults.delay_ms.load(Ordering::SeqCst);
        if !passing && delay > 0 && (faults.delay_all.load(Ordering::SeqCst) || take_one(&faults.delay_next)) {
            std::thread::sleep(Duration::from_millis(delay));
        }
        if !passing && take_one(&faults.fail_next) {
            out.write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n")?;
            continue;
        }
        let (bytes, version) = {
            let mut content = content.lock().expect("content lock");
            if faults.change_after.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)) == Ok(1) {
                content.1 += 1;
            }
            (Arc::clone(&content.0), content.1)
        };
        let total = bytes.len() as u64;
        let (status, start, end) = match range {
            Some((a, b)) if !faults.ignore_ranges.load(Ordering::SeqCst) && a < total => {
                ("206 Partial Content", a, b.map_or(total, |b| (b + 1).min(total)))
            }
            _ => ("200 OK", 0, total),
        };
        let body = &bytes[start as usize..end as usize];
        let mut head = format!(
            "HTTP/1.1 {status}\r\netag: \"v{version}\"\r\ncontent-length: {}\r\naccept-ranges: bytes\r\n",
            body.len()
        );
        if status.starts_with("206") {
            head.push_str(&format!("content-range: bytes {start}-{}/{total}\r\n", end - 1));
        }
        head.push_str("\r\n");
        out.write_all(head.as_bytes())?;
        if !passing && take_one(&faults.truncate_next) {
            out.write_all(&body[..body.len() / 2])?;
            return Ok(()); // close mid-body
        }
        out.write_all(body)?;
    }
}

/// Reads a whole file for [`FaultServer::serve`].
pub fn file_bytes(path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)).expect("reading the file to serve");
    bytes
}
