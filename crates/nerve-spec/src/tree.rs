//! A YAML tree that remembers where each node was written.
//!
//! yaml-rust2's own loaders recurse once per nesting level, so a hostile file of
//! nested `[` could overflow the stack. This builder pulls events one at a time
//! and keeps open collections on a heap stack capped at [`MAX_DEPTH`]; every
//! walk over the finished tree is iterative too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

use crate::error::Problem;

/// Deepest nesting of lists and mappings a dataflow file may use.
///
/// Real dataflows nest a handful of levels; the cap keeps hostile input cheap.
pub const MAX_DEPTH: usize = 128;

/// Most YAML nodes a file may expand to, aliases included, so that a few lines
/// of nested aliases ("billion laughs") cannot exhaust memory.
pub const MAX_NODES: usize = 1_000_000;

const YAML_FIELD: &str = "(yaml)";

/// A position in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    /// 1-based.
    pub(crate) line: usize,
    /// 1-based.
    pub(crate) column: usize,
    /// Byte offset, to order marks.
    index: usize,
    /// Which file: 0 the dataflow file, `n` the `n`th module file [`Problems::add_file`] named.
    file: u16,
}

impl Mark {
    pub(crate) const START: Mark = Mark { line: 1, column: 1, index: 0, file: 0 };
}

/// Collects problems while parsing continues, so that one run reports every mistake.
#[derive(Debug, Default)]
pub(crate) struct Problems {
    list: Vec<Problem>,
    /// The module files read so far, by [`Mark::file`] (less one).
    files: Vec<PathBuf>,
}

impl Problems {
    pub(crate) fn push(&mut self, mark: Mark, field: impl Into<String>, message: impl Into<String>) {
        let file = usize::from(mark.file).checked_sub(1).and_then(|i| self.files.get(i)).cloned();
        let problem =
            Problem { line: mark.line, column: mark.column, field: field.into(), message: message.into(), file };
        // A module used twice is checked twice: its problems are said once.
        if !self.list.contains(&problem) {
            self.list.push(problem);
        }
    }

    /// Makes the marks of `root`, read from `file`, name that file in the problems found there
    /// (past 65535 files, which no dataflow reads, they would name the dataflow file).
    pub(crate) fn add_file(&mut self, file: &Path, root: &mut Node) {
        let Ok(id) = u16::try_from(self.files.len() + 1) else { return };
        self.files.push(file.to_path_buf());
        let mut work = vec![root];
        while let Some(node) = work.pop() {
            node.mark.file = id;
            match &mut node.value {
                Value::Scalar(_) => {}
                Value::Seq(items) => work.extend(items.iter_mut()),
                Value::Map(entries) => work.extend(entries.iter_mut().flat_map(|(k, v)| [k, v])),
            }
        }
    }

    pub(crate) fn extend(&mut self, problems: Vec<Problem>) {
        self.list.extend(problems);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Sorted by position so the report reads top to bottom like the file;
    /// the sort is stable so problems at one spot keep the order they were found in.
    pub(crate) fn into_sorted(mut self) -> Vec<Problem> {
        self.list.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
        self.list
    }
}

impl From<Marker> for Mark {
    fn from(m: Marker) -> Self {
        // yaml-rust2 counts lines from 1 but columns from 0.
        Mark { line: m.line(), column: m.col() + 1, index: m.index(), file: 0 }
    }
}

/// A scalar as written, with its YAML 1.2 core-schema reading.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scalar {
    /// The text as written (after unquoting).
    pub(crate) text: String,
    pub(crate) kind: ScalarKind,
}

/// What a scalar resolves to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ScalarKind {
    Null,
    Bool(bool),
    /// Wide enough for every `i64` and `u64`.
    Int(i128),
    Float(f64),
    Str,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Scalar(Scalar),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

/// A YAML node and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub(crate) value: Value,
    pub(crate) mark: Mark,
}

impl Node {
    pub(crate) fn as_scalar(&self) -> Option<&Scalar> {
        match &self.value {
            Value::Scalar(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar(Scalar { kind: ScalarKind::Null, .. }))
    }

    /// The text of a non-null scalar: what string fields accept. Numbers and
    /// booleans count, as written, because `id: 7` or `FOO: true` mean that text.
    pub(crate) fn text(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) if s.kind != ScalarKind::Null => Some(&s.text),
            _ => None,
        }
    }

    /// "a string", "a list", …: for messages like "expected X, found a list".
    pub(crate) fn describe(&self) -> &'static str {
        match &self.value {
            Value::Scalar(s) => match s.kind {
                ScalarKind::Null => "nothing (null)",
                ScalarKind::Bool(_) => "a boolean",
                ScalarKind::Int(_) | ScalarKind::Float(_) => "a number",
                ScalarKind::Str => "a string",
            },
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// The node as JSON. Non-finite floats (`.inf`, `.nan`) have no JSON form
    /// and stay strings, as written; mapping keys are their text as written.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        enum Work<'a> {
            Visit(&'a Node),
            Seq(usize),
            Map(&'a [(Node, Node)]),
        }
        let mut work = vec![Work::Visit(self)];
        let mut done: Vec<serde_json::Value> = Vec::new();
        while let Some(item) = work.pop() {
            match item {
                Work::Visit(node) => match &node.value {
                    Value::Scalar(s) => done.push(scalar_json(s)),
                    Value::Seq(items) => {
                        work.push(Work::Seq(items.len()));
                        work.extend(items.iter().rev().map(Work::Visit));
                    }
                    Value::Map(entries) => {
                        work.push(Work::Map(entries));
                        work.extend(entries.iter().rev().map(|(_, v)| Work::Visit(v)));
                    }
                },
                Work::Seq(len) => {
                    let items = done.split_off(done.len().saturating_sub(len));
                    done.push(serde_json::Value::Array(items));
                }
                Work::Map(entries) => {
                    let values = done.split_off(done.len().saturating_sub(entries.len()));
                    let object = entries.iter().zip(values).map(|((k, _), v)| (key_text(k), v)).collect();
                    done.push(serde_json::Value::Object(object));
                }
            }
        }
        done.pop().unwrap_or(serde_json::Value::Null)
    }
}

fn key_text(key: &Node) -> String {
    key.as_scalar().map(|s| s.text.clone()).unwrap_or_default()
}

fn scalar_json(s: &Scalar) -> serde_json::Value {
    use serde_json::Value as J;
    match s.kind {
        ScalarKind::Null => J::Null,
        ScalarKind::Bool(b) => J::Bool(b),
        ScalarKind::Int(i) => {
            if let Ok(i) = i64::try_from(i) {
                J::from(i)
            } else if let Ok(u) = u64::try_from(i) {
                J::from(u)
            } else {
                float_json(i as f64, &s.text)
            }
        }
        ScalarKind::Float(f) => float_json(f, &s.text),
        ScalarKind::Str => J::String(s.text.clone()),
    }
}

fn float_json(f: f64, text: &str) -> serde_json::Value {
    serde_json::Number::from_f64(f)
        .map(serde_json::Value::Number)
        .unwrap_or_else(|| serde_json::Value::String(text.to_owned()))
}

/// Resolves a plain scalar the YAML 1.2 core-schema way.
fn resolve_plain(text: &str) -> ScalarKind {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarKind::Null,
        "true" | "True" | "TRUE" => return ScalarKind::Bool(true),
        "false" | "False" | "FALSE" => return ScalarKind::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return ScalarKind::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return ScalarKind::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return ScalarKind::Float(f64::NAN),
        _ => {}
    }
    if let Some(kind) = resolve_int(text) {
        return kind;
    }
    if is_core_float(text)
        && let Ok(f) = text.parse::<f64>()
    {
        return ScalarKind::Float(f);
    }
    ScalarKind::Str
}

fn resolve_int(text: &str) -> Option<ScalarKind> {
    let radix_digits = |prefix: &str, radix: u32| {
        text.strip_prefix(prefix).filter(|d| !d.is_empty() && d.chars().all(|c| c.is_digit(radix))).map(|d| (d, radix))
    };
    if let Some((digits, radix)) = radix_digits("0x", 16).or_else(|| radix_digits("0o", 8)) {
        return Some(match i128::from_str_radix(digits, radix) {
            Ok(i) => ScalarKind::Int(i),
            Err(_) => ScalarKind::Str,
        });
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match text.parse::<i128>() {
        Ok(i) => ScalarKind::Int(i),
        // Too long for i128: still a number, just an imprecise one.
        Err(_) => text.parse::<f64>().map_or(ScalarKind::Str, ScalarKind::Float),
    })
}

/// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
fn is_core_float(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let int_digits = digits(&mut i);
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        frac_digits = digits(&mut i);
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

fn scalar_kind(text: &str, style: TScalarStyle, tag: Option<&Tag>) -> ScalarKind {
    const CORE: &str = "tag:yaml.org,2002:";
    match tag {
        Some(t) if t.handle == CORE && t.suffix == "str" => ScalarKind::Str,
        // `!!int "3"` asks for the plain reading of quoted text; a tag that does
        // not fit the text (or a custom `!tag`) leaves the text a string.
        Some(t) if t.handle == CORE => match resolve_plain(text) {
            k @ ScalarKind::Null if t.suffix == "null" => k,
            k @ ScalarKind::Bool(_) if t.suffix == "bool" => k,
            k @ ScalarKind::Int(_) if t.suffix == "int" => k,
            k @ (ScalarKind::Int(_) | ScalarKind::Float(_)) if t.suffix == "float" => k,
            _ => ScalarKind::Str,
        },
        _ if style == TScalarStyle::Plain => resolve_plain(text),
        _ => ScalarKind::Str,
    }
}

enum Open {
    Seq(Vec<Node>),
    Map { entries: Vec<(Node, Node)>, key: Option<Node> },
}

struct Frame {
    open: Open,
    mark: Mark,
    anchor: usize,
    /// `count` when this collection opened, to size it for alias accounting.
    count_at_open: usize,
}

struct Builder {
    stack: Vec<Frame>,
    root: Option<Node>,
    /// Anchored nodes and how many nodes each expands to.
    anchors: HashMap<usize, (Node, usize)>,
    count: usize,
    problems: Problems,
}

impl Builder {
    fn add(&mut self, node: Node) {
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(node);
            return;
        };
        match &mut frame.open {
            Open::Seq(items) => items.push(node),
            Open::Map { entries, key } => match key.take() {
                Some(k) => {
                    let mut node = node;
                    // An empty value (`key:` then a newline) is marked where the
                    // next token starts, often on a later line; the key is where
                    // a reader looks for it.
                    if node.is_null() && node.as_scalar().is_some_and(|s| s.text.is_empty()) {
                        node.mark = k.mark;
                    }
                    entries.push((k, node));
                }
                None => {
                    if node.as_scalar().is_none() {
                        self.problems.push(
                            node.mark,
                            YAML_FIELD,
                            format!("a mapping key must be a plain value, found {}", node.describe()),
                        );
                    }
                    *key = Some(node);
                }
            },
        }
    }

    fn count_nodes(&mut self, n: usize, mark: Mark) -> Result<(), ()> {
        self.count = self.count.saturating_add(n);
        if self.count > MAX_NODES {
            self.problems.push(
                mark,
                YAML_FIELD,
                format!("the document expands to more than {MAX_NODES} values (aliases included)"),
            );
            return Err(());
        }
        Ok(())
    }

    fn open(&mut self, open: Open, mark: Mark, anchor: usize) -> Result<(), ()> {
        if self.stack.len() >= MAX_DEPTH {
            self.problems.push(
                mark,
                YAML_FIELD,
                format!("lists and mappings nest deeper than the limit of {MAX_DEPTH} levels"),
            );
            return Err(());
        }
        self.count_nodes(1, mark)?;
        self.stack.push(Frame { open, mark, anchor, count_at_open: self.count });
        Ok(())
    }

    fn close(&mut self) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        let (value, mark) = match frame.open {
            Open::Seq(items) => (Value::Seq(items), frame.mark),
            Open::Map { entries, .. } => {
                self.check_duplicate_keys(&entries);
                // A block mapping's start event points past its first key's
                // colon; the first key is where a reader sees the mapping begin.
                let mark = match entries.first() {
                    Some((k, _)) if k.mark.index < frame.mark.index => k.mark,
                    _ => frame.mark,
                };
                (Value::Map(entries), mark)
            }
        };
        let node = Node { value, mark };
        if frame.anchor != 0 {
            let size = self.count - frame.count_at_open + 1;
            self.anchors.insert(frame.anchor, (node.clone(), size));
        }
        self.add(node);
    }

    fn check_duplicate_keys(&mut self, entries: &[(Node, Node)]) {
        let mut seen: HashMap<&str, Mark> = HashMap::new();
        for (key, _) in entries {
            let Some(s) = key.as_scalar() else { continue };
            if let Some(first) = seen.get(s.text.as_str()) {
                self.problems.push(
                    key.mark,
                    YAML_FIELD,
                    format!("duplicate key `{}` (first at line {})", s.text, first.line),
                );
            } else {
                seen.insert(&s.text, key.mark);
            }
        }
    }
}

fn scan_problem(e: &ScanError) -> Problem {
    let mark = Mark::from(*e.marker());
    let message = if e.info() == "recursion limit exceeded" {
        format!("lists and mappings nest too deeply (yaml-rust2: {})", e.info())
    } else {
        e.info().to_owned()
    };
    Problem { line: mark.line, column: mark.column, field: YAML_FIELD.to_owned(), message, file: None }
}

/// Parses one YAML document. `Ok(None)` for a file with no document at all.
pub(crate) fn parse(text: &str) -> Result<Option<Node>, Vec<Problem>> {
    let mut parser = Parser::new_from_str(text);
    let mut b =
        Builder { stack: Vec::new(), root: None, anchors: HashMap::new(), count: 0, problems: Problems::default() };
    let mut documents = 0;
    loop {
        let (event, marker) = match parser.next_token() {
            Ok(next) => next,
            Err(e) => {
                b.problems.extend(vec![scan_problem(&e)]);
                break;
            }
        };
        let mark = Mark::from(marker);
        let step = match event {
            Event::StreamEnd => break,
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => Ok(()),
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    b.problems.push(
                        mark,
                        YAML_FIELD,
                        "a second YAML document (`---`): a dataflow file holds exactly one",
                    );
                    break;
                }
                Ok(())
            }
            Event::Alias(id) => match b.anchors.get(&id) {
                Some((node, size)) => {
                    let (mut node, size) = (node.clone(), *size);
                    node.mark = mark;
                    let counted = b.count_nodes(size, mark);
                    b.add(node);
                    counted
                }
                None => {
                    b.problems.push(mark, YAML_FIELD, "alias to an unknown or still open anchor");
                    Err(())
                }
            },
            Event::Scalar(text, style, anchor, tag) => {
                let kind = scalar_kind(&text, style, tag.as_ref());
                let node = Node { value: Value::Scalar(Scalar { text, kind }), mark };
                if anchor != 0 {
                    b.anchors.insert(anchor, (node.clone(), 1));
                }
                let counted = b.count_nodes(1, mark);
                b.add(node);
                counted
            }
            Event::SequenceStart(anchor, _) => b.open(Open::Seq(Vec::new()), mark, anchor),
            Event::MappingStart(anchor, _) => b.open(Open::Map { entries: Vec::new(), key: None }, mark, anchor),
            Event::SequenceEnd | Event::MappingEnd => {
                b.close();
                Ok(())
            }
        };
        if step.is_err() {
            break;
        }
    }
    if b.problems.is_empty() { Ok(b.root) } else { Err(b.problems.into_sorted()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> ScalarKind {
        resolve_plain(text)
    }

    #[test]
    fn core_schema() {
        assert_eq!(kind(""), ScalarKind::Null);
        assert_eq!(kind("~"), ScalarKind::Null);
        assert_eq!(kind("True"), ScalarKind::Bool(true));
        assert_eq!(kind("yes"), ScalarKind::Str);
        assert_eq!(kind("-12"), ScalarKind::Int(-12));
        assert_eq!(kind("0x1F"), ScalarKind::Int(31));
        assert_eq!(kind("0o17"), ScalarKind::Int(15));
        assert_eq!(kind("1.5"), ScalarKind::Float(1.5));
        assert_eq!(kind("1e3"), ScalarKind::Float(1000.0));
        assert_eq!(kind(".5"), ScalarKind::Float(0.5));
        assert_eq!(kind("1."), ScalarKind::Float(1.0));
        assert_eq!(kind("."), ScalarKind::Str);
        assert_eq!(kind("1e"), ScalarKind::Str);
        assert_eq!(kind("1_000"), ScalarKind::Str);
        assert_eq!(kind("0x"), ScalarKind::Str);
        assert_eq!(kind("12:30"), ScalarKind::Str);
        assert!(matches!(kind(".nan"), ScalarKind::Float(f) if f.is_nan()));
    }

    #[test]
    fn aliases_expand_and_count() {
        let tree = parse("a: &x [1, 2]\nb: *x\n").expect("valid").expect("a document");
        assert_eq!(tree.to_json(), serde_json::json!({"a": [1, 2], "b": [1, 2]}));
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let problems = parse(&text).expect_err("too big");
        assert!(problems[0].message.contains("expands to more than"), "{problems:?}");
    }

    #[test]
    fn empty_input_has_no_document() {
        assert_eq!(parse("").expect("valid"), None);
        assert_eq!(parse("# only a comment\n").expect("valid"), None);
    }
}
