//! `nerve coordinator`, `nerve daemon`, `nerve up`, `nerve destroy`, `nerve check` and
//! `nerve start`: one dataflow over several machines.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use nerve_cluster::protocol::{ClusterStatus, StartOptions};
use nerve_cluster::{Cluster, NetOptions};

use crate::topic::StopSignal;

/// Where the cluster's coordinator is: shared by every cluster command (TLS and the other
/// network options are every command's, see `crate::network`).
#[derive(Debug, Clone, clap::Args)]
pub struct NetArgs {
    /// The coordinator: `IP`, `IP:PORT`, `HOST:PORT` or a Zenoh endpoint (`tcp/…`, `tls/…`,
    /// `quic/…`) [default: $NERVE_COORDINATOR, else 127.0.0.1:53290; daemons without it look
    /// for the coordinator by multicast scouting].
    #[arg(long, value_name = "ADDRESS")]
    coordinator: Option<String>,
}

impl NetArgs {
    fn options(&self) -> anyhow::Result<NetOptions> {
        Ok(NetOptions { coordinator: self.coordinator.clone(), network: crate::network::current()? })
    }

    /// [`NetArgs::options`] of a role that listens where `listen` says, when it says.
    fn listening(&self, listen: &ListenArgs) -> anyhow::Result<NetOptions> {
        let mut options = self.options()?;
        if !listen.listen.is_empty() {
            options.network.listen.clone_from(&listen.listen);
        }
        Ok(options)
    }

    /// Whether the user named a coordinator (so not finding it is an error, not a quiet
    /// "no cluster here").
    pub fn named(&self) -> bool {
        self.coordinator.is_some() || std::env::var_os(nerve_cluster::net::COORDINATOR_ENV).is_some()
    }

    /// Connects to the coordinator.
    pub fn connect(&self) -> anyhow::Result<Cluster> {
        Ok(Cluster::connect(&self.options()?)?)
    }
}

/// `nerve coordinator`.
#[derive(Debug, clap::Args)]
pub struct CoordinatorArgs {
    /// Address to listen on (0.0.0.0 for every interface) [default: 127.0.0.1, this machine only].
    #[arg(long, value_name = "IP")]
    interface: Option<String>,
    /// Port to listen on.
    #[arg(long, default_value_t = nerve_cluster::net::DEFAULT_PORT)]
    port: u16,
    #[command(flatten)]
    listen: ListenArgs,
    #[command(flatten)]
    net: NetArgs,
}

/// `nerve daemon`.
#[derive(Debug, clap::Args)]
pub struct DaemonArgs {
    /// This machine's id, as dataflows name it in `deploy: {machine: ID}` [default: the host name].
    #[arg(long, value_name = "ID")]
    machine_id: Option<String>,
    /// A label of this machine (repeatable): nodes with `deploy: {labels: {KEY: VALUE}}` and no
    /// machine of their own go to a machine that has all their labels.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = label)]
    labels: Vec<(String, String)>,
    #[command(flatten)]
    priority: PriorityArgs,
    #[command(flatten)]
    listen: ListenArgs,
    #[command(flatten)]
    net: NetArgs,
}

/// A daemon's own scheduling.
#[derive(Debug, Clone, clap::Args)]
pub struct PriorityArgs {
    /// Run the daemon's threads with SCHED_FIFO at this priority (1..99): real-time nodes'
    /// messages to and from other machines go through them [default: normal scheduling].
    #[arg(long, value_name = "PRIORITY", value_parser = clap::value_parser!(u8).range(1..=99))]
    realtime_priority: Option<u8>,
}

impl PriorityArgs {
    /// Raises this process to the priority asked for, if any.
    fn apply(&self) -> anyhow::Result<()> {
        if let Some(priority) = self.realtime_priority {
            nerve_runtime::raise_this_process(priority, nerve_spec::SchedPolicy::Fifo)?;
        }
        Ok(())
    }

    /// The options that ask a daemon started in the background for the same.
    fn args(&self) -> Vec<String> {
        self.realtime_priority.map(|p| vec!["--realtime-priority".to_owned(), p.to_string()]).unwrap_or_default()
    }
}

fn label(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!("`{text}` is not KEY=VALUE")),
    }
}

/// Where a coordinator or daemon listens.
#[derive(Debug, Clone, clap::Args)]
pub struct ListenArgs {
    /// Zenoh endpoints to listen on (`tcp/10.0.0.2:7000`, `quic/…`, `udp/…`; repeatable)
    /// [default: $NERVE_LISTEN, else a coordinator on --interface and --port, a daemon on the
    /// address through which it reaches the coordinator, any port, same protocol].
    #[arg(long, value_name = "ENDPOINT")]
    listen: Vec<String>,
}

/// `nerve up`.
#[derive(Debug, clap::Args)]
pub struct UpArgs {
    /// The local daemon's machine id [default: the host name].
    #[arg(long, value_name = "ID")]
    machine_id: Option<String>,
    #[command(flatten)]
    priority: PriorityArgs,
    #[command(flatten)]
    net: NetArgs,
}

/// `nerve destroy` and `nerve check`.
#[derive(Debug, clap::Args)]
pub struct ClusterArgs {
    #[command(flatten)]
    net: NetArgs,
}

/// `nerve start`.
#[derive(Debug, clap::Args)]
pub struct StartArgs {
    /// The dataflow YAML file (at the same path on every machine it uses).
    dataflow: PathBuf,
    /// A name for `nerve list`, `nerve stop` and `nerve logs` (unique among running dataflows).
    #[arg(long, value_parser = crate::run_name)]
    name: Option<String>,
    /// Stay: print every node's output as it comes, and wait for the dataflow to end (Ctrl-C
    /// stops it).
    #[arg(long)]
    attach: bool,
    /// Seconds nodes get to exit after a stop before they are killed.
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    grace: f64,
    /// Seconds every node on every machine gets to become ready.
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    ready_timeout: f64,
    /// Bytes each output's pool of shared memory keeps.
    #[arg(long, value_name = "BYTES", default_value_t = nerve_runtime::DEFAULT_POOL_CAPACITY)]
    pool_capacity: usize,
    /// Largest message a node may send, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 32)]
    max_message: usize,
    #[command(flatten)]
    net: NetArgs,
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_owned()).unwrap_or_default()
}

/// Runs the coordinator until Ctrl-C or `nerve destroy`.
pub fn coordinator(args: &CoordinatorArgs) -> anyhow::Result<i32> {
    let mut options = args.net.listening(&args.listen)?;
    if options.network.listen.is_empty() {
        let ip = args.interface.as_deref().unwrap_or("127.0.0.1");
        let address = match ip.parse::<std::net::IpAddr>() {
            Ok(ip) => std::net::SocketAddr::new(ip, args.port).to_string(),
            Err(_) => format!("{ip}:{}", args.port),
        };
        let scheme = options.network.scheme();
        options.network.listen.push(nerve_cluster::net::endpoint(&address, scheme)?);
    }
    let stop = StopSignal::install()?;
    nerve_cluster::coordinator::serve(&options, stop.flag())?;
    Ok(0)
}

/// Runs this machine's daemon until Ctrl-C or `nerve destroy`.
pub fn daemon(args: &DaemonArgs) -> anyhow::Result<i32> {
    let opts = nerve_cluster::machine::DaemonOptions {
        machine: args.machine_id.clone().unwrap_or_else(hostname),
        labels: args.labels.iter().cloned().collect(),
        net: args.net.listening(&args.listen)?,
        python: crate::python(),
    };
    // Before the daemon starts a thread: they all inherit it.
    args.priority.apply()?;
    let stop = StopSignal::install()?;
    nerve_cluster::machine::serve(opts, stop.flag())?;
    Ok(0)
}

/// Starts a coordinator and a daemon of this machine in the background, unless a coordinator
/// already answers.
pub fn up(args: &UpArgs) -> anyhow::Result<i32> {
    if let Ok(cluster) = args.net.connect()
        && let Ok(status) = cluster.check()
    {
        eprintln!("nerve: a coordinator already runs at {}", cluster.endpoint());
        print_check(&status);
        return Ok(0);
    }
    let machine = args.machine_id.clone().unwrap_or_else(hostname);
    let dir = nerve_message::runtime_dir().join("cluster");
    nerve_message::private_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
    // Both get this command's network options (TLS, the Zenoh file…) through their environment.
    let mut started = vec![background(&["coordinator".to_owned()], &dir.join("coordinator.log"))?];
    // The daemon is told where the coordinator is: it may start before the coordinator listens.
    let endpoint = args.net.options()?.coordinator_endpoint()?;
    let mut daemon_args = ["daemon", "--machine-id", &machine, "--coordinator", &endpoint].map(str::to_owned).to_vec();
    daemon_args.extend(args.priority.args());
    started.push(background(&daemon_args, &dir.join("daemon.log"))?);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(cluster) = args.net.connect()
            && let Ok(status) = cluster.check()
            && status.daemons.iter().any(|d| d.machine == machine)
        {
            eprintln!("nerve: coordinator and daemon `{machine}` are up (logs in {})", dir.display());
            print_check(&status);
            return Ok(0);
        }
        if Instant::now() >= deadline {
            // Nothing half-started stays behind.
            for mut child in started {
                let _ = child.kill();
                let _ = child.wait();
            }
            anyhow::bail!("the coordinator and daemon did not come up within 30 s; see the logs in {}", dir.display());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Starts `nerve <args>` in a session of its own, detached from this terminal, writing to `log`.
fn background(args: &[String], log: &std::path::Path) -> anyhow::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    let (program, full) = crate::nerve_itself(args)?;
    let nerve_spec::NodePath::Executable(program) = program else {
        anyhow::bail!("cannot find the nerve command to start in the background");
    };
    let out = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let mut command = Command::new(program);
    command
        .args(full)
        .envs(crate::network::current()?.to_env())
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    // SAFETY: `setsid` is async-signal-safe, and nothing else runs between fork and exec.
    unsafe {
        command.pre_exec(|| rustix::process::setsid().map(|_| ()).map_err(std::io::Error::from));
    }
    command.spawn().with_context(|| format!("starting `nerve {}`", args.join(" ")))
}

/// Stops every dataflow, daemon and the coordinator.
pub fn destroy(args: &ClusterArgs) -> anyhow::Result<i32> {
    let cluster = args.net.connect()?;
    let endpoint = cluster.endpoint().to_owned();
    cluster.destroy()?;
    drop(cluster);
    let deadline = Instant::now() + Duration::from_secs(30);
    while args.net.connect().is_ok_and(|c| c.check().is_ok()) {
        if Instant::now() >= deadline {
            anyhow::bail!("the coordinator at {endpoint} still answers 30 s after it was asked to exit");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("nerve: the cluster at {endpoint} is down");
    Ok(0)
}

/// Prints whether the coordinator is up and which daemons are connected.
pub fn check(args: &ClusterArgs) -> anyhow::Result<i32> {
    let cluster = args.net.connect()?;
    let status = cluster.check()?;
    println!("coordinator: {} (pid {} on {})", cluster.endpoint(), status.coordinator.pid, status.coordinator.hostname);
    print_check(&status);
    Ok(0)
}

fn print_check(status: &ClusterStatus) {
    if status.daemons.is_empty() {
        println!("no daemon connected");
    }
    for d in &status.daemons {
        let labels: Vec<String> = d.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let labels = if labels.is_empty() { String::new() } else { format!(", labels {}", labels.join(" ")) };
        println!(
            "daemon `{}`: pid {} on {}, listening on {}, running {} dataflow(s){labels}",
            d.machine,
            d.process.pid,
            d.process.hostname,
            d.process.listen.join(", "),
            d.running
        );
    }
}

/// Runs a dataflow on the cluster; with `--attach`, follows it until it ends.
pub fn start(args: &StartArgs) -> anyhow::Result<i32> {
    let df = crate::load(&args.dataflow)?;
    if df.network != nerve_spec::NetworkSpec::default() {
        tracing::warn!(
            "the dataflow's `network:` is for `nerve run`: on a cluster, each daemon's own network options \
             (`nerve daemon --discovery-range …`) say how its nodes reach other hosts"
        );
    }
    let millis = |s: f64, what| crate::secs(s, what).map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let options = StartOptions {
        grace_ms: millis(args.grace, "grace")?,
        ready_timeout_ms: millis(args.ready_timeout, "ready-timeout")?,
        pool_capacity: args.pool_capacity,
        max_message: args.max_message,
    };
    let cluster = args.net.connect()?;
    let uuid = nerve_cluster::new_dataflow_id();
    // Followed before the start, so no line is missed.
    let _logs =
        if args.attach { Some(cluster.follow_logs(&uuid, |node, line| println!("[{node}] {line}"))?) } else { None };
    let stop = args.attach.then(StopSignal::install).transpose()?;
    let started = cluster.start(df, args.name.clone(), uuid.clone(), options)?;
    let mut machines: Vec<&String> = started.placement.values().collect();
    machines.sort();
    machines.dedup();
    eprintln!(
        "nerve: started dataflow {} on {}",
        nerve_cluster::protocol::label(args.name.as_deref(), &started.uuid),
        machines.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
    );
    let Some(stop) = stop else {
        println!("{}", started.uuid);
        return Ok(0);
    };
    let mut stopping = false;
    loop {
        if stop.raised() && !stopping {
            eprintln!("nerve: stopping the dataflow");
            cluster.stop(&uuid)?;
            stopping = true;
        }
        let status = cluster.list()?.into_iter().find(|d| d.uuid == uuid);
        match status {
            Some(d) if d.state.is_over() => {
                // The last lines reach this tool over the network a moment after the end.
                std::thread::sleep(Duration::from_millis(300));
                eprintln!(
                    "nerve: dataflow {}: {}",
                    d.state.as_str(),
                    d.error.as_deref().unwrap_or("every node finished")
                );
                return Ok(i32::from(d.state != nerve_cluster::protocol::RunState::Finished));
            }
            Some(_) => {}
            None => anyhow::bail!("the coordinator forgot dataflow {uuid}"),
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}
