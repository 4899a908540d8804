//! Real Redis deployments past one server, on loopback, for as long as the values live: a
//! Redis Cluster of 3 primaries + 3 replicas (`redis-cli --cluster create`) and a primary
//! with a replica and three sentinels. Every node persists (`appendonly yes`), as hak
//! requires. Nodes are killed with SIGKILL or frozen with SIGSTOP by the tests.

use crate::root;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One `redis-server` (or sentinel) process.
pub struct Node {
    child: Option<Child>,
    pub port: u16,
    /// How it was started (a restart starts it the same way, on the same files).
    args: Vec<String>,
    dir: PathBuf,
}

impl Node {
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// SIGKILL (the process is gone; its port refuses).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start it again after [`Node::kill`], on its own files (as a supervisor would).
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "the node still runs");
        let again = spawn(&self.dir, &self.args);
        let mut again = again;
        self.child = again.child.take();
    }

    /// Start it again after [`Node::kill`] as a replica of the primary at `port` (what the
    /// sentinels would make of it once they see it back; doing it at start spares the test
    /// their next poll, up to 10 s).
    pub fn restart_as_replica_of(&mut self, port: u16) {
        assert!(self.child.is_none(), "the node still runs");
        let mut args = self.args.clone();
        args.extend(["--replicaof".into(), "127.0.0.1".into(), port.to_string()]);
        let mut again = spawn(&self.dir, &args);
        self.child = again.child.take();
    }

    /// `SIGSTOP` / `SIGCONT`: it keeps its port and answers nothing while stopped.
    pub fn signal(&self, signal: &str) {
        let child = self.child.as_ref().expect("a running node");
        let status = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal}");
    }

    /// `redis-cli -p PORT ARGS…`, its output (empty when the node does not answer).
    pub fn cli(&self, args: &[&str]) -> String {
        cli(self.port, args)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `redis-cli` against a port, with a short timeout.
pub fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("timeout")
        .arg("5")
        .arg("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .stderr(Stdio::null())
        .output()
        .expect("redis-cli runs (Debian's redis-tools, installed with redis-server)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether the primary at `port` has a replica that is in sync (`state=online`) and
/// acknowledges writes (`WAIT 1` answers 1).
fn replica_online(port: u16) -> bool {
    cli(port, &["info", "replication"]).contains("state=online")
        && cli(port, &["wait", "1", "200"]).trim() == "1"
}

/// A free loopback port whose cluster bus port (+10000) is free too.
fn free_cluster_port() -> u16 {
    loop {
        let port = crate::free_port();
        if port < 55_000 && std::net::TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn spawn(dir: &std::path::Path, args: &[String]) -> Node {
    let port: u16 = args
        .iter()
        .position(|a| a == "--port")
        .and_then(|i| args[i + 1].parse().ok())
        .expect("a --port");
    std::fs::create_dir_all(dir).unwrap();
    let mut child = Command::new("redis-server")
        .args(args)
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server runs (scripts/install-deps.sh installs Debian's redis-server)");
    // Ours only once the server answering on the port gives our pid (another process may
    // have taken the port since it was found free; ours then exits).
    wait_until(
        &format!("redis-server did not start on port {port}"),
        Duration::from_secs(10),
        || {
            assert!(
                child.try_wait().ok().flatten().is_none(),
                "redis-server exited at start: port {port} is taken"
            );
            crate::redis_pid_at(port) == Some(child.id())
        },
    );
    Node {
        child: Some(child),
        port,
        args: args.to_vec(),
        dir: dir.to_owned(),
    }
}

fn node_args(port: u16) -> Vec<String> {
    [
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "yes",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// 3 primaries + 3 replicas, `cluster-node-timeout 2000`, `cluster-require-full-coverage no`.
pub struct RedisCluster {
    pub nodes: Vec<Node>,
    dir: PathBuf,
}

impl RedisCluster {
    pub fn start() -> Self {
        let first = free_cluster_port();
        let dir = root().join(format!("target/test-tmp/redis-cluster-{first}"));
        let _ = std::fs::remove_dir_all(&dir);
        let mut ports = vec![first];
        while ports.len() < 6 {
            let port = free_cluster_port();
            if !ports.contains(&port) {
                ports.push(port);
            }
        }
        let nodes: Vec<Node> = ports
            .iter()
            .map(|&port| {
                let mut args = node_args(port);
                for extra in [
                    "--cluster-enabled",
                    "yes",
                    "--cluster-node-timeout",
                    "2000",
                    // While one shard fails over, the others keep serving (the default, yes,
                    // refuses every key until the failed slots have a primary again).
                    "--cluster-require-full-coverage",
                    "no",
                    "--cluster-config-file",
                    &format!("nodes-{port}.conf"),
                ] {
                    args.push(extra.to_owned());
                }
                spawn(&dir.join(port.to_string()), &args)
            })
            .collect();
        let addrs: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        let out = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdin(Stdio::null())
            .output()
            .expect("redis-cli --cluster create");
        assert!(
            out.status.success(),
            "redis-cli --cluster create: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = RedisCluster { nodes, dir };
        cluster.wait_healthy(&[]);
        cluster
    }

    /// The seed list a manifest names.
    pub fn seeds(&self) -> Vec<String> {
        self.nodes.iter().map(Node::url).collect()
    }

    /// Wait until every running node (but `skip`) says the cluster is ok and every
    /// primary has a replica that is in sync.
    pub fn wait_healthy(&self, skip: &[u16]) {
        wait_until(
            "the cluster never became healthy",
            Duration::from_secs(30),
            || {
                self.nodes
                    .iter()
                    .filter(|n| !skip.contains(&n.port))
                    .all(|n| n.cli(&["cluster", "info"]).contains("cluster_state:ok"))
                    && self.primaries().iter().all(|&p| replica_online(p))
            },
        );
    }

    /// The ports of the primaries, as the running nodes see them.
    pub fn primaries(&self) -> Vec<u16> {
        for node in &self.nodes {
            if node.child.is_none() {
                continue;
            }
            let text = node.cli(&["cluster", "nodes"]);
            if text.is_empty() {
                continue;
            }
            return text
                .lines()
                .filter(|l| {
                    let flags = l.split(' ').nth(2).unwrap_or_default();
                    flags.contains("master") && !flags.contains("fail")
                })
                .filter_map(|l| {
                    let addr = l.split(' ').nth(1)?;
                    addr.split('@').next()?.rsplit(':').next()?.parse().ok()
                })
                .collect();
        }
        Vec::new()
    }

    pub fn node(&mut self, port: u16) -> &mut Node {
        self.nodes
            .iter_mut()
            .find(|n| n.port == port)
            .expect("a node of this cluster")
    }

    /// Every key matching `pattern` on the primary at `port`.
    pub fn keys_on(&self, port: u16, pattern: &str) -> Vec<String> {
        cli(port, &["--scan", "--pattern", pattern])
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        self.nodes.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A primary, one replica and three sentinels (quorum 2) following it as `service`, with
/// `down-after-milliseconds 1000`.
pub struct RedisSentinelSet {
    pub primary: Node,
    pub replica: Node,
    pub sentinels: Vec<Node>,
    pub service: String,
    dir: PathBuf,
}

impl RedisSentinelSet {
    pub fn start() -> Self {
        let primary_port = free_cluster_port();
        let dir = root().join(format!("target/test-tmp/redis-sentinel-{primary_port}"));
        let _ = std::fs::remove_dir_all(&dir);
        let primary = spawn(&dir.join("primary"), &node_args(primary_port));
        let replica_port = free_cluster_port();
        let mut args = node_args(replica_port);
        args.extend([
            "--replicaof".into(),
            "127.0.0.1".into(),
            primary_port.to_string(),
        ]);
        let replica = spawn(&dir.join("replica"), &args);
        wait_until("the replica never synced", Duration::from_secs(20), || {
            replica_online(primary_port)
        });
        let service = "hakstate".to_owned();
        let sentinels = (0..3)
            .map(|i| {
                let port = free_cluster_port();
                let sdir = dir.join(format!("sentinel-{i}"));
                std::fs::create_dir_all(&sdir).unwrap();
                let conf = sdir.join("sentinel.conf");
                std::fs::write(
                    &conf,
                    format!(
                        "port {port}\nbind 127.0.0.1\nsentinel monitor {service} 127.0.0.1 {primary_port} 2\nsentinel down-after-milliseconds {service} 1000\nsentinel failover-timeout {service} 5000\nsentinel parallel-syncs {service} 1\n"
                    ),
                )
                .unwrap();
                let child = Command::new("redis-server")
                    .arg(&conf)
                    .arg("--sentinel")
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("redis-server --sentinel");
                wait_until("a sentinel did not start", Duration::from_secs(10), || {
                    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                });
                Node {
                    child: Some(child),
                    port,
                    args: Vec::new(),
                    dir: sdir,
                }
            })
            .collect::<Vec<_>>();
        let set = RedisSentinelSet {
            primary,
            replica,
            sentinels,
            service,
            dir,
        };
        wait_until(
            "the sentinels never saw each other and the replica",
            Duration::from_secs(20),
            || {
                set.sentinels.iter().all(|s| {
                    let info = s.cli(&["sentinel", "master", &set.service]);
                    let field = |name: &str| {
                        let mut lines = info.lines();
                        while let Some(l) = lines.next() {
                            if l == name {
                                return lines.next().unwrap_or_default().to_owned();
                            }
                        }
                        String::new()
                    };
                    field("num-other-sentinels") == "2" && field("num-slaves") == "1"
                })
            },
        );
        set
    }

    pub fn sentinel_urls(&self) -> Vec<String> {
        self.sentinels.iter().map(Node::url).collect()
    }

    /// The port the sentinels name as the primary now.
    pub fn primary_port(&self) -> Option<u16> {
        for s in &self.sentinels {
            let out = s.cli(&["sentinel", "get-master-addr-by-name", &self.service]);
            if let Some(port) = out.lines().nth(1).and_then(|p| p.trim().parse().ok()) {
                return Some(port);
            }
        }
        None
    }
}

impl Drop for RedisSentinelSet {
    fn drop(&mut self) {
        self.sentinels.clear();
        self.primary.kill();
        self.replica.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
