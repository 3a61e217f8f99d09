//! `module:` nodes (dora-rs's reusable sub-dataflows), expanded into plain nodes before any
//! node is parsed, so the rest of nerve never sees a module.
//!
//! A module file has a `module:` header (`name`, `inputs`, `inputs_optional`, `outputs`), an
//! optional `build:` and a `nodes:` list. A node `M` with `module: FILE` becomes the file's nodes,
//! each renamed `M.<id>`: `_mod/PORT` reads what `M`'s `inputs:` wired to `PORT`, a sibling's
//! `N/out` becomes `M.N/out`, and `M/out` elsewhere is the one child that produces `out`.
//! Paths in a module are relative to its file; `params:` replace `$PARAM_KEY` and
//! `${_param.key}` in the children's `args` and are set as `PARAM_KEY` in their environment;
//! `env`, `deploy` and `build` of the module node reach every child.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::fields::{join_field, key_str, mapping, shown, string_field, unknown_key};
use crate::tree::{self, Mark, Node, Problems, Scalar, ScalarKind, Value};

/// Modules within modules, at most this deep (a cycle is reported before).
const MAX_DEPTH: usize = 8;

const FILE_KEYS: &[&str] = &["module", "nodes", "build"];
const HEADER_KEYS: &[&str] = &["name", "inputs", "inputs_optional", "outputs"];
/// A module node has no program of its own: these would be dropped silently.
const NOT_ON_A_MODULE: &[&str] =
    &["path", "args", "git", "branch", "tag", "rev", "hub", "operators", "operator", "custom", "ros2", "outputs"];
/// Sources that name no node.
const NOT_NODES: &[&str] = &["dora", "timer", "topic"];

/// A node of the flat dataflow and the folder its relative paths start from.
pub(crate) struct Placed {
    pub(crate) item: Node,
    pub(crate) base_dir: PathBuf,
}

/// The dataflow's `nodes:` with every module node replaced by the nodes it stands for.
pub(crate) fn expand(items: &[Node], base_dir: &Path, p: &mut Problems) -> Vec<Placed> {
    let mut expander = Expander { p, loaded: HashMap::new(), chain: Vec::new() };
    expander.level(items, base_dir, "", None, &Inherited::default())
}

/// A module file, read.
struct Module {
    file: PathBuf,
    dir: PathBuf,
    name: String,
    inputs: Vec<String>,
    optional: Vec<String>,
    outputs: Vec<(String, Mark)>,
    build: Option<String>,
    nodes: Vec<Node>,
}

/// What a module's children get from the module node (and the module nodes around it).
#[derive(Default, Clone)]
struct Inherited {
    env: Vec<(String, Node)>,
    params: BTreeMap<String, String>,
    deploy: Option<Node>,
    /// `build:` commands of the modules around, outermost first, each with its module's folder.
    build: Vec<(String, PathBuf)>,
}

/// The `_mod/PORT` sources of one module's children: what the module node wired to each port.
struct Ports<'a> {
    module: &'a Module,
    wired: HashMap<String, Node>,
}

/// What a sibling `N` of a level is, for the sources naming it.
enum Sibling {
    Node,
    /// A module node: its outputs, as the flat sources they stand for.
    Module(HashMap<String, String>),
}

struct Expander<'p> {
    p: &'p mut Problems,
    /// Module files by canonical path; `None`: unreadable, already reported.
    loaded: HashMap<PathBuf, Option<std::rc::Rc<Module>>>,
    /// The module files being expanded, outermost first: a file in it again is a cycle.
    chain: Vec<PathBuf>,
}

impl Expander<'_> {
    /// The nodes of one level (the dataflow, or one module's `nodes:`), flat. `prefix` is what
    /// their ids get (`M.` in module `M`).
    fn level(
        &mut self,
        items: &[Node],
        dir: &Path,
        prefix: &str,
        ports: Option<&Ports<'_>>,
        inherited: &Inherited,
    ) -> Vec<Placed> {
        let mut siblings = HashMap::new();
        let mut modules = Vec::new();
        for item in items {
            let Some(id) = entry(item, "id").and_then(Node::text) else { continue };
            match entry(item, "module") {
                Some(file) => {
                    let module = self.module(file, dir, &format!("nodes[{prefix}{id}].module"));
                    let outputs =
                        module.as_ref().map(|m| self.outputs(m, &format!("{prefix}{id}"))).unwrap_or_default();
                    siblings.insert(id.to_owned(), Sibling::Module(outputs));
                    modules.push(module);
                }
                None => {
                    siblings.insert(id.to_owned(), Sibling::Node);
                }
            }
        }
        let mut placed = Vec::new();
        let mut modules = modules.into_iter();
        for item in items {
            let mut item = item.clone();
            let id = entry(&item, "id").and_then(Node::text).map(str::to_owned);
            let field = id.as_deref().map_or_else(|| "nodes[?]".to_owned(), |id| format!("nodes[{prefix}{id}]"));
            self.rewrite_inputs(&mut item, &field, prefix, ports, &siblings);
            match (id, entry(&item, "module").is_some()) {
                (Some(id), true) => {
                    if let Some(module) = modules.next().flatten() {
                        placed.extend(self.module_node(&item, &field, &format!("{prefix}{id}"), &module, inherited));
                    }
                }
                (id, _) => {
                    if let Some(id) = id.filter(|_| !prefix.is_empty()) {
                        set_text(&mut item, "id", &format!("{prefix}{id}"));
                    }
                    if ports.is_some() {
                        inherit(&mut item, dir, inherited);
                    }
                    placed.push(Placed { item, base_dir: dir.to_path_buf() });
                }
            }
        }
        placed
    }

    /// The children of module node `item` (flat id `id`), checked against the module's header.
    fn module_node(
        &mut self,
        item: &Node,
        field: &str,
        id: &str,
        module: &std::rc::Rc<Module>,
        inherited: &Inherited,
    ) -> Vec<Placed> {
        let Value::Map(entries) = &item.value else { return Vec::new() };
        let mut wired = HashMap::new();
        let mut inner = Inherited { params: BTreeMap::new(), ..inherited.clone() };
        // Outer parameters reach nested modules' nodes as environment, as dora-rs passes them.
        for (key, value) in &inherited.params {
            inner.env.push((param_var(key), text_node(value, item.mark)));
        }
        for (key, value) in entries {
            let k = key_str(key);
            let kfield = join_field(field, k);
            match k {
                "id" | "module" | "name" | "description" => {}
                "inputs" => {
                    for (port, source) in
                        mapping(self.p, value, &kfield, "a mapping of module inputs to sources").unwrap_or_default()
                    {
                        let port_name = key_str(port);
                        if module.inputs.iter().chain(&module.optional).any(|p| p == port_name) {
                            // The source alone: queue settings are the reading node's own.
                            let source = entry(source, "source").unwrap_or(source);
                            wired.insert(port_name.to_owned(), source.clone());
                        } else {
                            self.p.push(
                                port.mark,
                                join_field(&kfield, port_name),
                                format!(
                                    "module `{}` ({}) has no input `{port_name}`; its inputs: {}",
                                    module.name,
                                    module.file.display(),
                                    listed(module.inputs.iter().chain(&module.optional))
                                ),
                            );
                        }
                    }
                }
                "env" => {
                    for (name, v) in
                        mapping(self.p, value, &kfield, "a mapping of variable names to values").unwrap_or_default()
                    {
                        inner.env.retain(|(n, _)| n != key_str(name));
                        inner.env.push((key_str(name).to_owned(), v.clone()));
                    }
                }
                "params" => inner.params = self.params(value, &kfield),
                "deploy" | "_unstable_deploy" => inner.deploy = Some(value.clone()),
                "build" => {
                    if let Some(build) = string_field(self.p, value, &kfield) {
                        inner.build.push((build, module.dir.clone()));
                    }
                }
                k if NOT_ON_A_MODULE.contains(&k) => self.p.push(
                    key.mark,
                    kfield,
                    format!(
                        "`{k}` on a module node: a module node runs no program of its own; its nodes are in {} \
                         (give them settings through `params`, `env`, `deploy` or `build`)",
                        module.file.display()
                    ),
                ),
                _ => {}
            }
        }
        for required in module.inputs.iter().filter(|i| !wired.contains_key(*i)) {
            self.p.push(
                item.mark,
                join_field(field, "inputs"),
                format!(
                    "module `{}` ({}) needs input `{required}`: add `{required}: <node>/<output>` to `inputs`",
                    module.name,
                    module.file.display()
                ),
            );
        }
        inner.build.extend(module.build.clone().map(|b| (b, module.dir.clone())));
        self.chain.push(module.file.clone());
        let ports = Ports { module, wired };
        let placed = self.level(&module.nodes, &module.dir, &format!("{id}."), Some(&ports), &inner);
        self.chain.pop();
        placed
    }

    /// `params:` of a module node: names of letters, digits and `_`, one per `PARAM_` variable.
    fn params(&mut self, value: &Node, field: &str) -> BTreeMap<String, String> {
        let mut params = BTreeMap::new();
        let mut vars: HashMap<String, String> = HashMap::new();
        for (key, v) in mapping(self.p, value, field, "a mapping of parameter names to values").unwrap_or_default() {
            let name = key_str(key);
            let pfield = join_field(field, name);
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                self.p.push(key.mark, pfield, format!("module parameter `{name}`: use only letters, digits and `_`"));
                continue;
            }
            if let Some(other) = vars.insert(param_var(name), name.to_owned()) {
                self.p.push(
                    key.mark,
                    pfield,
                    format!("module parameters `{other}` and `{name}` are both `{}`: rename one", param_var(name)),
                );
                continue;
            }
            match v.as_scalar() {
                Some(s) if s.kind != ScalarKind::Null => {
                    params.insert(name.to_owned(), s.text.clone());
                }
                _ => self.p.push(v.mark, pfield, format!("expected a value (text or number), found {}", v.describe())),
            }
        }
        params
    }

    /// Rewrites the sources of `item`'s inputs for the flat dataflow; drops the inputs reading
    /// an optional module input that is not wired.
    fn rewrite_inputs(
        &mut self,
        item: &mut Node,
        field: &str,
        prefix: &str,
        ports: Option<&Ports<'_>>,
        siblings: &HashMap<String, Sibling>,
    ) {
        let Some(inputs) = entry_mut(item, "inputs") else { return };
        let Value::Map(entries) = &mut inputs.value else { return };
        let mut dropped = Vec::new();
        for (i, (name, value)) in entries.iter_mut().enumerate() {
            let ifield = join_field(&join_field(field, "inputs"), key_str(name));
            let source = match &mut value.value {
                Value::Map(_) => entry_mut(value, "source"),
                _ => Some(value),
            };
            let Some(source) = source else { continue };
            let Some(text) = source.text().map(str::to_owned) else { continue };
            match self.resolve(&text, source.mark, &ifield, prefix, ports, siblings) {
                Resolved::Keep => {}
                Resolved::Now(node) => *source = node,
                Resolved::Dropped => dropped.push(i),
            }
        }
        for i in dropped.into_iter().rev() {
            entries.remove(i);
        }
    }

    fn resolve(
        &mut self,
        source: &str,
        mark: Mark,
        field: &str,
        prefix: &str,
        ports: Option<&Ports<'_>>,
        siblings: &HashMap<String, Sibling>,
    ) -> Resolved {
        let Some((head, rest)) = source.split_once('/') else { return Resolved::Keep };
        if NOT_NODES.contains(&head) {
            return Resolved::Keep;
        }
        match (head, ports, siblings.get(head)) {
            ("_mod", Some(ports), _) => match ports.wired.get(rest) {
                Some(wired) => Resolved::Now(wired.clone()),
                None if ports.module.optional.iter().any(|p| p == rest) => Resolved::Dropped,
                // A required port not wired is reported at the module node.
                None if ports.module.inputs.iter().any(|p| p == rest) => Resolved::Dropped,
                None => {
                    let m = ports.module;
                    self.p.push(
                        mark,
                        field,
                        format!(
                            "`{source}`: module `{}` declares no input `{rest}`; its inputs: {}",
                            m.name,
                            listed(m.inputs.iter().chain(&m.optional))
                        ),
                    );
                    Resolved::Dropped
                }
            },
            ("_mod", None, _) => {
                self.p.push(
                    mark,
                    field,
                    format!("`{source}`: `_mod/...` reads a module's input, inside a module file"),
                );
                Resolved::Dropped
            }
            (_, _, Some(Sibling::Node)) if !prefix.is_empty() => {
                Resolved::Now(text_node(&format!("{prefix}{source}"), mark))
            }
            (_, _, Some(Sibling::Node)) => Resolved::Keep,
            (_, _, Some(Sibling::Module(outputs))) => match outputs.get(rest) {
                Some(flat) => Resolved::Now(text_node(flat, mark)),
                None => {
                    let mut names: Vec<&String> = outputs.keys().collect();
                    names.sort();
                    self.p.push(
                        mark,
                        field,
                        format!(
                            "`{source}`: module node `{head}` has no output `{rest}`; its outputs: {}",
                            listed(names)
                        ),
                    );
                    Resolved::Dropped
                }
            },
            (_, Some(ports), None) => {
                self.p.push(
                    mark,
                    field,
                    format!(
                        "`{source}`: no node `{head}` in module `{}`; a module reads from outside through \
                         `_mod/<input>`",
                        ports.module.name
                    ),
                );
                Resolved::Dropped
            }
            // Not a node of the dataflow either: the checks of the flat dataflow say so.
            (_, None, None) => Resolved::Keep,
        }
    }

    /// The outputs of `module`, used as node `id`: each the source of the one child producing it.
    fn outputs(&mut self, module: &Module, id: &str) -> HashMap<String, String> {
        let mut resolved = HashMap::new();
        for (output, mark) in &module.outputs {
            let mut producers = Vec::new();
            for child in &module.nodes {
                let Some(child_id) = entry(child, "id").and_then(Node::text) else { continue };
                let flat_id = format!("{id}.{child_id}");
                if let Some(file) = entry(child, "module") {
                    self.chain.push(module.file.clone());
                    let nested = self.module(file, &module.dir, &format!("nodes[{flat_id}].module"));
                    let found = nested.and_then(|n| self.outputs(&n, &flat_id).remove(output));
                    self.chain.pop();
                    producers.extend(found);
                } else if produces(child, output) {
                    producers.push(format!("{flat_id}/{output}"));
                }
            }
            match producers.as_slice() {
                [one] => {
                    resolved.insert(output.clone(), one.clone());
                }
                [] => self.p.push(
                    *mark,
                    "module.outputs",
                    format!("module `{}` declares output `{output}`, but none of its nodes sends it", module.name),
                ),
                many => self.p.push(
                    *mark,
                    "module.outputs",
                    format!(
                        "module `{}` declares output `{output}`, sent by {} of its nodes ({}): rename all but one",
                        module.name,
                        many.len(),
                        listed(many.iter())
                    ),
                ),
            }
        }
        resolved
    }

    /// The module file `file` names, relative to `dir`; `None` (reported) when it cannot be used.
    fn module(&mut self, file: &Node, dir: &Path, field: &str) -> Option<std::rc::Rc<Module>> {
        let written = string_field(self.p, file, field)?;
        let path = dir.join(&written);
        let Ok(canonical) = path.canonicalize() else {
            self.p.push(file.mark, field, format!("module file `{}` not found", path.display()));
            return None;
        };
        if self.chain.contains(&canonical) {
            self.p.push(
                file.mark,
                field,
                format!("module `{written}` includes itself (through {})", chain(&self.chain)),
            );
            return None;
        }
        if self.chain.len() >= MAX_DEPTH {
            self.p.push(
                file.mark,
                field,
                format!("modules nest deeper than {MAX_DEPTH} levels: {}", chain(&self.chain)),
            );
            return None;
        }
        if let Some(module) = self.loaded.get(&canonical) {
            return module.clone();
        }
        let module = self.read(&canonical, file.mark).map(std::rc::Rc::new);
        self.loaded.insert(canonical, module.clone());
        module
    }

    fn read(&mut self, file: &Path, at: Mark) -> Option<Module> {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) => {
                self.p.push(at, "module", format!("cannot read module file {}: {e}", file.display()));
                return None;
            }
        };
        let mut root = match tree::parse(text.strip_prefix('\u{feff}').unwrap_or(&text)) {
            Ok(Some(root)) => root,
            Ok(None) => {
                self.p.push(at, "module", format!("module file {} is empty", file.display()));
                return None;
            }
            Err(problems) => {
                self.p.extend(
                    problems.into_iter().map(|p| crate::Problem { file: Some(file.to_path_buf()), ..p }).collect(),
                );
                return None;
            }
        };
        self.p.add_file(file, &mut root);
        let mut module = Module {
            file: file.to_path_buf(),
            dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
            name: String::new(),
            inputs: Vec::new(),
            optional: Vec::new(),
            outputs: Vec::new(),
            build: None,
            nodes: Vec::new(),
        };
        let entries = mapping(self.p, &root, "(document)", "a mapping with `module:` and `nodes:`")?;
        let mut header = None;
        for (key, value) in entries {
            match key_str(key) {
                "module" => header = Some(value),
                "nodes" => match &value.value {
                    Value::Seq(items) if !items.is_empty() => module.nodes.clone_from(items),
                    _ => self.p.push(value.mark, "nodes", "expected a list of the module's nodes"),
                },
                "build" => module.build = string_field(self.p, value, "build"),
                k => unknown_key(self.p, key, k, FILE_KEYS),
            }
        }
        let Some(header) = header else {
            self.p.push(root.mark, "module", "missing the `module:` header (`name`, `inputs`, `outputs`)");
            return None;
        };
        for (key, value) in mapping(self.p, header, "module", "a mapping with `name`, `inputs` and `outputs`")? {
            let k = key_str(key);
            let field = join_field("module", k);
            match k {
                "name" => module.name = string_field(self.p, value, &field).unwrap_or_default(),
                "inputs" => module.inputs = self.ports(value, &field).into_iter().map(|(n, _)| n).collect(),
                "inputs_optional" => module.optional = self.ports(value, &field).into_iter().map(|(n, _)| n).collect(),
                "outputs" => module.outputs = self.ports(value, &field),
                _ => unknown_key(self.p, key, &field, HEADER_KEYS),
            }
        }
        if module.name.is_empty() {
            self.p.push(header.mark, "module.name", "a module needs a `name`");
        }
        Some(module)
    }

    /// A list of port names, each once.
    fn ports(&mut self, value: &Node, field: &str) -> Vec<(String, Mark)> {
        let Value::Seq(items) = &value.value else {
            self.p.push(value.mark, field, format!("expected a list of port names, found {}", value.describe()));
            return Vec::new();
        };
        let mut ports: Vec<(String, Mark)> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let ifield = format!("{field}[{i}]");
            match item.text() {
                Some(name) if ports.iter().any(|(p, _)| p == name) => {
                    self.p.push(item.mark, ifield, format!("port `{name}` is listed twice"));
                }
                Some(name) => match crate::check_id(name) {
                    Ok(()) => ports.push((name.to_owned(), item.mark)),
                    Err(e) => self.p.push(item.mark, ifield, e.to_string()),
                },
                None => self.p.push(item.mark, ifield, format!("expected a port name, found {}", shown(item))),
            }
        }
        ports
    }
}

enum Resolved {
    Keep,
    Now(Node),
    /// Reads an optional module input nobody wired, or a source already reported as wrong
    /// (the checks of the flat dataflow would only repeat it): the input goes.
    Dropped,
}

/// Gives a module's child (in folder `dir`) what its module node and those around it set.
fn inherit(item: &mut Node, dir: &Path, inherited: &Inherited) {
    let mark = item.mark;
    if !matches!(item.value, Value::Map(_)) {
        return; // reported as the flat dataflow is parsed
    }
    if let Some(args) = entry_mut(item, "args")
        && let Value::Scalar(s) = &mut args.value
    {
        s.text = substitute(&s.text, &inherited.params);
        s.kind = ScalarKind::Str;
    }
    // Parameters first: they win over every variable but none of the node's own variables wins
    // over them; the module nodes' variables come after the node's own.
    let params: Vec<(String, Node)> =
        inherited.params.iter().map(|(k, v)| (param_var(k), text_node(v, mark))).collect();
    if let Some(Value::Map(own)) = entry_mut(item, "env").map(|env| &mut env.value) {
        own.retain(|(k, _)| !params.iter().any(|(p, _)| p == key_str(k)));
    }
    for (name, value) in params.into_iter().chain(inherited.env.iter().cloned()) {
        if let Some(Node { value: Value::Map(entries), .. }) =
            entry_or_insert(item, "env", Node { value: Value::Map(Vec::new()), mark })
            && !entries.iter().any(|(k, _)| key_str(k) == name)
        {
            entries.push((text_node(&name, value.mark), value));
        }
    }
    if let Some(deploy) = &inherited.deploy
        && entry(item, "deploy").is_none()
        && entry(item, "_unstable_deploy").is_none()
    {
        entry_or_insert(item, "deploy", deploy.clone());
    }
    // Each command in the folder of the file that says it, and a failed step stops the build.
    // A `git:` node's own command runs in its clone, where the build starts.
    let in_folder = |(command, folder): &(String, PathBuf)| format!("(cd {} && {command})", quoted(folder));
    let own = entry(item, "build").and_then(Node::text).map(|b| match entry(item, "git") {
        Some(_) => b.to_owned(),
        None => in_folder(&(b.to_owned(), dir.to_path_buf())),
    });
    let steps: Vec<String> = inherited.build.iter().map(in_folder).chain(own).collect();
    if !steps.is_empty()
        && let Some(build) = entry_or_insert(item, "build", text_node("", mark))
    {
        *build = text_node(&steps.join(" && "), mark);
    }
}

/// `folder` as one word of a POSIX shell command.
fn quoted(folder: &Path) -> String {
    format!("'{}'", folder.display().to_string().replace('\'', r"'\''"))
}

/// `$PARAM_KEY` (the longest run of letters, digits and `_`) and `${_param.key}` replaced by their
/// values, in one pass: a value is never read again for references.
fn substitute(text: &str, params: &BTreeMap<String, String>) -> String {
    let by_var: HashMap<String, &String> = params.iter().map(|(k, v)| (param_var(k), v)).collect();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(inner) = after.strip_prefix("{_param.")
            && let Some(end) = inner.find('}')
            && let Some(value) = params.get(&inner[..end])
        {
            out.push_str(value);
            rest = &inner[end + 1..];
            continue;
        }
        let len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        match by_var.get(&after[..len]) {
            Some(value) if after.starts_with("PARAM_") => {
                out.push_str(value);
                rest = &after[len..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn param_var(key: &str) -> String {
    format!("PARAM_{}", key.to_uppercase())
}

/// Whether node `item` lists `output` among its `outputs`.
fn produces(item: &Node, output: &str) -> bool {
    let Some(Node { value: Value::Seq(outputs), .. }) = entry(item, "outputs") else { return false };
    outputs.iter().any(|o| o.text().or_else(|| entry(o, "id").and_then(Node::text)) == Some(output))
}

fn entry<'a>(item: &'a Node, key: &str) -> Option<&'a Node> {
    let Value::Map(entries) = &item.value else { return None };
    entries.iter().find(|(k, _)| key_str(k) == key).map(|(_, v)| v)
}

fn entry_mut<'a>(item: &'a mut Node, key: &str) -> Option<&'a mut Node> {
    let Value::Map(entries) = &mut item.value else { return None };
    entries.iter_mut().find(|(k, _)| key_str(k) == key).map(|(_, v)| v)
}

/// The value of `key` in mapping `item`, added as `value` when missing; `None` for no mapping.
fn entry_or_insert<'a>(item: &'a mut Node, key: &str, value: Node) -> Option<&'a mut Node> {
    let mark = item.mark;
    let Value::Map(entries) = &mut item.value else { return None };
    let at = match entries.iter().position(|(k, _)| key_str(k) == key) {
        Some(at) => at,
        None => {
            entries.push((text_node(key, mark), value));
            entries.len() - 1
        }
    };
    Some(&mut entries[at].1)
}

fn set_text(item: &mut Node, key: &str, text: &str) {
    if let Some(Node { value: Value::Scalar(s), .. }) = entry_mut(item, key) {
        s.text = text.to_owned();
        s.kind = ScalarKind::Str;
    }
}

fn text_node(text: &str, mark: Mark) -> Node {
    Node { value: Value::Scalar(Scalar { text: text.to_owned(), kind: ScalarKind::Str }), mark }
}

fn listed<T: AsRef<str>>(names: impl IntoIterator<Item = T>) -> String {
    let names: Vec<String> = names.into_iter().map(|n| format!("`{}`", n.as_ref())).collect();
    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
}

fn chain(files: &[PathBuf]) -> String {
    files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(" → ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn both_spellings_are_replaced_and_nothing_else() {
        let p = params(&[("speed", "2.0"), ("mode", "turbo")]);
        assert_eq!(substitute("--speed $PARAM_SPEED --mode ${_param.mode}", &p), "--speed 2.0 --mode turbo");
        // A longer name is another parameter, not `speed` followed by text.
        assert_eq!(substitute("$PARAM_SPEED_LIMIT $PARAM_SPEEDx", &p), "$PARAM_SPEED_LIMIT $PARAM_SPEEDx");
        assert_eq!(substitute("$HOME ${_param.unknown} $ $", &p), "$HOME ${_param.unknown} $ $");
    }

    #[test]
    fn a_value_is_not_read_again_for_references() {
        let p = params(&[("a", "$PARAM_B"), ("b", "no")]);
        assert_eq!(substitute("$PARAM_A ${_param.a}", &p), "$PARAM_B $PARAM_B");
    }
}
