//! `mcp-gateway`: the command line. Everything it does lives in the `gateway` library.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Parser, Subcommand};
use gateway::{Application, Config};

// The gateway allocates and frees many small buffers per call (JSON values, headers, SSE frames);
// mimalloc measured about 10% more calls/s than glibc malloc here (docs/benchmarks.md).
#[global_allocator]
static GLOBAL: gateway::allocator::Mimalloc = gateway::allocator::Mimalloc;

#[derive(Parser)]
#[command(
    name = "mcp-gateway",
    version,
    about = "Many MCP servers behind one Streamable HTTP endpoint"
)]
struct Cli {
    /// Configuration file (default: config/gateway.toml if present, else the bundled example).
    #[arg(long, short, global = true, env = "MCP_GATEWAY_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the gateway (the default).
    Serve,
    /// Run the database migrations and exit.
    Migrate,
    /// Add the servers of a Claude Desktop / Cursor `{"mcpServers": ...}` file to the registry.
    /// Each secret-looking value becomes a reference to a variable (said, with what to set),
    /// and a secret in a command line or URL is refused.
    ImportMcpServers {
        file: PathBuf,
        /// Print what would be imported and change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Check the configuration and print the upstreams it defines.
    CheckConfig,
    /// Exit 0 when the gateway this configuration describes answers its /healthz (for a
    /// container's HEALTHCHECK: the image has no curl). Asks the probes' address
    /// (`server.ops_listen`, else `server.listen`; an unspecified address as loopback).
    Healthcheck,
    /// Sign in at an MCP server behind OAuth as the gateway would for a user (discovery,
    /// registration, authorization code with PKCE, following the authorization server's
    /// redirects as a browser would), then initialize, list and call a tool; print what
    /// happened. A client registered beforehand comes from `--client-id`/`--client-secret` or
    /// the conformance suite's `MCP_CONFORMANCE_CONTEXT`.
    UpstreamLogin {
        url: String,
        #[arg(long)]
        client_id: Option<String>,
        #[arg(long)]
        client_secret: Option<String>,
        /// The https URL of the gateway's client ID metadata document, its `client_id` where
        /// the server supports such documents.
        #[arg(long)]
        client_metadata_url: Option<String>,
    },
    /// Print the JSON Schema of the configuration file.
    ConfigSchema {
        /// Print the Helm chart's values.schema.json instead (its `config` is the file).
        #[arg(long)]
        chart_values: bool,
    },
    /// Write what was registered through the admin API (upstreams with their tool curation,
    /// roles, virtual servers) as one JSON document; secrets stay references.
    Export {
        /// Where to write it (default: standard output).
        #[arg(long)]
        output: Option<PathBuf>,
        /// Include the config file's upstreams and roles too.
        #[arg(long)]
        with_config: bool,
    },
    /// Create or replace what a document from `export` holds (JSON, or TOML by file extension).
    /// Every item is checked before anything changes; a running gateway follows within a minute
    /// (at once on Postgres).
    Import {
        file: PathBuf,
        /// Print what would change and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Also delete what was registered through the API and the document does not name.
        #[arg(long)]
        prune: bool,
    },
    /// Personal access tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// The audit log.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Measure tool routing quality (recall@k, nDCG@10, MRR) and latency on a catalog and a
    /// query set (JSON lines; see the routing evaluation README), with the real model.
    EvalRouting(EvalArgs),
    /// Print the texts the model embeds for a catalog's tools and for requests, as JSON lines
    /// (what `scripts/train-routing-model` trains on).
    RoutingTexts {
        #[arg(long)]
        catalog: Option<PathBuf>,
        #[arg(long)]
        queries: Option<PathBuf>,
    },
}

/// The options of `eval-routing`.
#[derive(clap::Args)]
struct EvalArgs {
    #[arg(long, default_value = "../shared/routing-eval/catalog.jsonl")]
    catalog: PathBuf,
    #[arg(long, default_value = "../shared/routing-eval/queries.jsonl")]
    queries: PathBuf,
    /// Requests no tool serves: adds the "nothing fits" threshold trade-off.
    #[arg(long)]
    no_tool: Option<PathBuf>,
    /// Print the report as JSON instead of Markdown tables.
    #[arg(long)]
    json: bool,
    /// Also write the JSON report to this file.
    #[arg(long)]
    json_out: Option<PathBuf>,
    /// No progress lines on standard error.
    #[arg(long)]
    quiet: bool,
    /// Also rank with requests split into their steps (one search per step, merged).
    #[arg(long)]
    split: bool,
    /// Put every query's answer (its steps, its top 10 and the step each tool came from) into
    /// the JSON report, to read what a step found.
    #[arg(long)]
    rankings: bool,
    /// Fusion weights (default: the config's routing.fusion). Several lexical weights,
    /// comma-separated, give one hybrid row each.
    #[arg(long)]
    semantic_weight: Option<f32>,
    #[arg(long, value_delimiter = ',')]
    lexical_weight: Vec<f32>,
    /// BM25's weight for a request of one need that no reading put in the tools' words
    /// (routing.fusion.single_need_lexical_weight): every unsplit hybrid row, and a split
    /// row's requests of one step.
    #[arg(long)]
    single_need_lexical_weight: Option<f32>,
    #[arg(long)]
    rrf_k: Option<f32>,
    /// What a step's nearly as fitting tool gains for belonging to an upstream the rest of the
    /// request chose, and what a step's later tool of no such upstream loses
    /// (routing.fusion.provider_weight; 0: each step stands alone).
    #[arg(long)]
    provider_weight: Option<f32>,
    /// What a step's tool of another kind of action than the step asks for loses
    /// (routing.fusion.action_weight; 0: actions are not compared).
    #[arg(long)]
    action_weight: Option<f32>,
    /// `score` or `rrf`.
    #[arg(long)]
    fusion: Option<String>,
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Create a token and print it (it is shown this once). The config's roles are seeded first,
    /// so a first admin token can be made before the gateway ever ran.
    Create {
        #[arg(long)]
        name: String,
        #[arg(long)]
        owner: String,
        /// A role the token carries (repeatable).
        #[arg(long = "role")]
        roles: Vec<String>,
        #[arg(long)]
        expires_in_days: Option<u32>,
    },
    /// List tokens (never the tokens themselves).
    List,
    /// Revoke a token by its id: refused at once by every replica.
    Revoke { id: String },
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Recompute the hash chain; exit 1 and name the first broken row if it is broken.
    Verify,
}

/// Records a change made with the CLI in the audit log (it bypasses the admin API).
async fn audit_cli(reg: &registry::SqlRegistry, action: &str, target: &str) -> anyhow::Result<()> {
    use registry::AuditStore;
    let user = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    reg.append_audit(&[registry::AuditEntry {
        at: registry::now_ms(),
        principal: format!("cli:{user}"),
        action: action.into(),
        target: Some(target.into()),
        outcome: "ok".into(),
        ..Default::default()
    }])
    .await?;
    Ok(())
}

async fn open_registry(config: &Config) -> anyhow::Result<registry::SqlRegistry> {
    Ok(registry::SqlRegistry::open(config.database.url.expose(), Default::default()).await?)
}

/// The config file: `--config`, else `config/gateway.toml` when it is there (`None`: the
/// bundled example).
fn config_path(cli: &Cli) -> Option<PathBuf> {
    let default = Path::new("config/gateway.toml");
    cli.config
        .clone()
        .or_else(|| default.exists().then(|| default.to_path_buf()))
}

fn load(cli: &Cli) -> anyhow::Result<Config> {
    let env: HashMap<String, String> = std::env::vars().collect();
    Ok(Config::load(config_path(cli).as_deref(), env)?)
}

/// `mcp-gateway check-config`: every error and warning (standard error), then the upstreams
/// (standard output) when the file can be used; the exit code is 1 when it cannot.
fn check_config(cli: &Cli) -> i32 {
    let env: HashMap<String, String> = std::env::vars().collect();
    let report = gateway::config::check::check(config_path(cli).as_deref(), env);
    for e in &report.errors {
        eprintln!("error: {e}");
    }
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    let Some(config) = report.config else {
        eprintln!(
            "{} error(s), {} warning(s): the gateway would not start",
            report.errors.len(),
            report.warnings.len()
        );
        return 1;
    };
    for u in &config.upstreams {
        println!("{} ({})", u.name, u.transport.kind().as_str());
    }
    eprintln!("valid, {} warning(s)", report.warnings.len());
    0
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("signal handler");
    tokio::select! {
        _ = ctrl_c => {}
        _ = term.recv() => {}
    }
    tracing::info!("shutting down");
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    gateway::memory::one_glibc_arena();
    gateway::memory::glibc_thresholds();
    gateway::memory::purge_freed_when_serving();
    let cli = Cli::parse();
    if matches!(cli.command, Some(Command::CheckConfig)) {
        std::process::exit(check_config(&cli));
    }
    // The server logs what it does; a one-shot command prints its answer and only warnings.
    // hnsw_rs logs its settings at INFO for every graph it builds.
    let default_filter = match cli.command {
        None | Some(Command::Serve) => "info,hnsw_rs=warn",
        Some(_) => "warn",
    };
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let (otel, traces) = match gateway::telemetry::layer() {
        Ok(Some((layer, provider))) => (Some(layer), Some(provider)),
        Ok(None) => (None, None),
        Err(e) => anyhow::bail!("traces: {e}"),
    };
    let mut filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| default_filter.into());
    // One global filter, so that what nobody records is decided once per call site and costs
    // nothing per call (per-layer filters are asked on every event). With traces on, the trace
    // spans pass it; the log shows them as context of its lines (trace id, method, tool), which
    // is also how a line in a spawned task keeps its request's trace id.
    if otel.is_some() {
        filter = filter.add_directive(format!("{}=debug", gateway::telemetry::TARGET).parse()?);
    }
    // The configuration is read before the log starts: it says how lines are written. Reading
    // it logs nothing; a failure is the command's answer.
    let config = load(&cli);
    let format = config.as_ref().map(|c| c.log.format).unwrap_or_default();
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let json = format.json(terminal);
    let json_lines = json.then(|| {
        tracing_subscriber::fmt::layer()
            .json()
            .fmt_fields(gateway::log_format::SpanFields)
            .event_format(gateway::log_format::JsonLines::new())
            .with_writer(std::io::stderr)
    });
    let text = (!json).then(|| {
        tracing_subscriber::fmt::layer()
            .with_ansi(terminal)
            .with_writer(std::io::stderr)
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(otel)
        .with(json_lines)
        .with(text)
        .init();
    let out = match config {
        Ok(config) => run(cli, config).await,
        Err(e) => Err(e),
    };
    if let Some(traces) = traces {
        // The last spans are sent before the process ends.
        let _ = tokio::task::spawn_blocking(move || traces.shutdown()).await;
    }
    out
}

async fn run(cli: Cli, config: Config) -> anyhow::Result<()> {
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let app = Application::build(config).await?;
            // Tests and scripts read this line to learn the port when listening on port 0.
            println!("listening on http://{}/mcp", app.local_addr());
            if let Some(ops) = app.ops_addr() {
                tracing::info!(%ops, "probes and metrics served on their own port");
            }
            app.serve(shutdown_signal()).await
        }
        Command::Migrate => {
            registry::SqlRegistry::open(config.database.url.expose(), Default::default()).await?;
            println!("migrations applied");
            Ok(())
        }
        Command::ImportMcpServers { file, dry_run } => {
            import_mcp_servers(&config, &file, dry_run).await
        }
        Command::Token(cmd) => token(&config, cmd).await,
        Command::Audit(AuditCommand::Verify) => {
            use registry::AuditStore;
            let report = open_registry(&config).await?.verify_audit().await?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            if !report.ok {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::EvalRouting(args) => eval_routing(&config, args),
        Command::RoutingTexts { catalog, queries } => routing_texts(catalog, queries),
        Command::Healthcheck => {
            let mut addr = config.server.ops_listen.unwrap_or(config.server.listen);
            if addr.ip().is_unspecified() {
                addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
            }
            let url = format!("http://{addr}/healthz");
            let r = reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(5))
                .build()?
                .get(&url)
                .send()
                .await
                .with_context(|| format!("asking {url}"))?;
            anyhow::ensure!(r.status().is_success(), "{url} answered {}", r.status());
            println!("healthy ({url})");
            Ok(())
        }
        Command::ConfigSchema { chart_values } => {
            let schema = if chart_values {
                gateway::config::chart_values_schema()
            } else {
                gateway::config::json_schema()
            };
            println!("{}", serde_json::to_string_pretty(&schema)?);
            Ok(())
        }
        Command::Export {
            output,
            with_config,
        } => export(&config, output, with_config).await,
        Command::Import {
            file,
            dry_run,
            prune,
        } => import(&config, &file, dry_run, prune).await,
        Command::UpstreamLogin {
            url,
            client_id,
            client_secret,
            client_metadata_url,
        } => {
            // The conformance suite gives a scenario's pre-registered client this way.
            let context: serde_json::Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
                .ok()
                .and_then(|c| serde_json::from_str(&c).ok())
                .unwrap_or_default();
            let id = client_id.or_else(|| context["client_id"].as_str().map(str::to_string));
            let secret =
                client_secret.or_else(|| context["client_secret"].as_str().map(str::to_string));
            let choice = gateway::upstream::credentials::ClientChoice {
                preregistered: id.map(|i| (i, secret)),
                metadata_url: client_metadata_url,
            };
            // The suite runs a scenario at the revision its server speaks.
            let modern = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
                .is_ok_and(|v| v == gateway::protocol::Revision::Stateless.as_str());
            let summary = gateway::upstream::credentials::sign_in(&url, choice, modern)
                .await
                .map_err(anyhow::Error::msg)?;
            println!("{summary}");
            Ok(())
        }
        Command::CheckConfig => unreachable!("answered before the configuration is loaded"),
    }
}

/// `mcp-gateway import-mcp-servers FILE`: the servers of a host's `mcp.json` into the registry,
/// except those the config file defines (it wins).
async fn import_mcp_servers(config: &Config, file: &Path, dry_run: bool) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let (specs, notes) =
        gateway::config::mcp_servers::parse_with(&text, &|n| std::env::var(n).ok(), file.parent())
            .map_err(anyhow::Error::msg)?;
    for n in &notes {
        println!("{n}");
    }
    // What the config file defines wins over what the registry holds (the admin API
    // refuses to change it too): a server of the same name is not imported.
    let defined_by = config.file.as_ref().map_or_else(
        || "the bundled example config".to_string(),
        |p| format!("the config file {}", p.display()),
    );
    let (specs, clashes): (Vec<_>, Vec<_>) = specs
        .into_iter()
        .partition(|s| !config.upstreams.iter().any(|u| u.name == s.name));
    for s in &clashes {
        println!(
            "{} {}: {defined_by} defines an upstream of this name, and it wins; rename \
             the server in {} or remove it from the config file",
            if dry_run { "would skip" } else { "skipped" },
            s.name,
            file.display()
        );
    }
    if dry_run {
        for s in &specs {
            println!("would import {}", s.name);
        }
        println!("dry run: nothing changed");
        return Ok(());
    }
    let reg = registry::SqlRegistry::open(config.database.url.expose(), Default::default()).await?;
    use registry::Registry;
    for s in specs {
        let before = reg.get_upstream(&s.name).await?;
        reg.put_upstream(&s.name, &serde_json::to_value(&s)?, "api")
            .await?;
        match before {
            Some(_) => println!("replaced {} (it was registered before)", s.name),
            None => println!("imported {}", s.name),
        }
    }
    Ok(())
}

/// `mcp-gateway token ...`
async fn token(config: &Config, cmd: TokenCommand) -> anyhow::Result<()> {
    use registry::{AccessStore, Registry};
    let reg = open_registry(config).await?;
    match cmd {
        TokenCommand::Create {
            name,
            owner,
            roles,
            expires_in_days,
        } => {
            for role in &config.roles {
                reg.put_role(&role.name, &serde_json::to_value(role)?, "config")
                    .await?;
            }
            let req = gateway::auth::pat::NewToken {
                name,
                owner,
                roles,
                expires_in_days,
            };
            let (token, rec) = gateway::auth::pat::issue(&reg as &dyn Registry, &req).await?;
            audit_cli(&reg, "admin.token.create", &rec.id).await?;
            eprintln!("token {} created; it is shown this once:", rec.id);
            println!("{token}");
        }
        TokenCommand::List => {
            for t in reg.list_tokens().await? {
                let state = if t.revoked_at.is_some() {
                    "revoked"
                } else if t.expires_at.is_some_and(|e| e <= registry::now_ms()) {
                    "expired"
                } else {
                    "active"
                };
                println!(
                    "{}\t{}\t{}\t{}\t{state}",
                    t.id,
                    t.name,
                    t.owner,
                    t.roles.join(",")
                );
            }
        }
        TokenCommand::Revoke { id } => {
            reg.revoke_token(&id).await?;
            audit_cli(&reg, "admin.token.revoke", &id).await?;
            println!("revoked {id}");
        }
    }
    Ok(())
}

/// `mcp-gateway eval-routing ...`
fn eval_routing(config: &Config, args: EvalArgs) -> anyhow::Result<()> {
    let EvalArgs {
        catalog,
        queries,
        no_tool,
        json,
        json_out,
        quiet,
        split,
        rankings,
        semantic_weight,
        lexical_weight,
        single_need_lexical_weight,
        rrf_k,
        provider_weight,
        action_weight,
        fusion: fusion_method,
    } = args;
    let mut fusion = config.routing.fusion;
    fusion.semantic_weight = semantic_weight.unwrap_or(fusion.semantic_weight);
    fusion.rrf_k = rrf_k.unwrap_or(fusion.rrf_k);
    fusion.single_need_lexical_weight =
        single_need_lexical_weight.unwrap_or(fusion.single_need_lexical_weight);
    fusion.provider_weight = provider_weight.unwrap_or(fusion.provider_weight);
    fusion.action_weight = action_weight.unwrap_or(fusion.action_weight);
    if let Some(m) = fusion_method {
        fusion.method = serde_json::from_value(serde_json::Value::from(m))
            .map_err(|_| anyhow::anyhow!("--fusion must be score or rrf"))?;
    }
    let fusions = if lexical_weight.is_empty() {
        vec![fusion]
    } else {
        lexical_weight
            .iter()
            .map(|&w| registry::routing::Fusion {
                lexical_weight: w,
                ..fusion
            })
            .collect()
    };
    let options = gateway::routing::eval::Options {
        catalog,
        queries,
        no_tool,
        fusions,
        split,
        progress: !quiet,
        rankings,
    };
    let report = gateway::routing::eval::run(&options, &config.routing.model)?;
    if let Some(path) = json_out {
        std::fs::write(&path, serde_json::to_string_pretty(&report)?)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.markdown());
    }
    Ok(())
}

/// `mcp-gateway routing-texts ...`
fn routing_texts(catalog: Option<PathBuf>, queries: Option<PathBuf>) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    gateway::routing::texts::write(catalog.as_deref(), queries.as_deref(), &mut out)?;
    std::io::Write::flush(&mut out)?;
    Ok(())
}

/// `mcp-gateway export`: what the API registered, as one document.
async fn export(config: &Config, output: Option<PathBuf>, with_config: bool) -> anyhow::Result<()> {
    let reg = open_registry(config).await?;
    // The file's items as the gateway would hold them, so they are told apart.
    gateway::seed::seed(&reg, config).await?;
    let doc = gateway::exchange::export(&reg, with_config).await?;
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    match output {
        Some(path) => {
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// `mcp-gateway import`: a plan printed, then carried out unless it is a dry run.
async fn import(config: &Config, file: &Path, dry_run: bool, prune: bool) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let toml = file.extension().is_some_and(|e| e == "toml");
    let doc =
        gateway::exchange::parse(&text, toml).with_context(|| format!("{}", file.display()))?;
    let reg = open_registry(config).await?;
    gateway::seed::seed(&reg, config).await?;
    let steps = gateway::exchange::plan(&reg, config, &doc, prune).await?;
    for s in &steps {
        println!("{s}");
    }
    if dry_run {
        println!("dry run: nothing changed");
    } else {
        gateway::exchange::apply(&reg, &doc, &steps).await?;
    }
    Ok(())
}
