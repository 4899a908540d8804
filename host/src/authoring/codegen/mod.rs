//! Types for plugin authors, generated from the tools' JSON Schemas (`tools::shapes`):
//! TypeScript declarations ([`typescript`]), Go structs ([`go`]) and Python TypedDicts
//! ([`python`]) for every tool's raw params, normalised params and `coreActionResult`
//! (`hak tools --shapes ts|go|py`; the SDKs ship the output). Both read one model built here from the subset of JSON Schema the kit's
//! schemas and schemars produce (type / type lists, properties, required, items, enum, const,
//! anyOf / oneOf, `$ref` to `$defs`, description).
//!
//! Hand-written on purpose: no kept Rust crate emits TypeScript, Go or Python from JSON Schema
//! (typify emits Rust), and quicktype would put a node toolchain in the build for a few
//! hundred lines over a schema subset we control. Nothing here runs on the call path.

pub mod go;
pub mod python;
pub mod typescript;

use crate::tools::shapes::ToolShapes;
use serde_json::{Map, Value};

/// How `hak tools --shapes` prints the stage JSON shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ShapesFormat {
    Json,
    Ts,
    Go,
    Py,
}

/// What `hak tools --shapes <format>` prints (the SDKs ship the ts and go output).
pub fn render(format: ShapesFormat) -> String {
    let shapes = crate::tools::ToolRegistry::native().shapes();
    match format {
        ShapesFormat::Json => {
            let document = crate::tools::shapes::document(&shapes);
            serde_json::to_string_pretty(&document).unwrap_or_default() + "\n"
        }
        ShapesFormat::Ts => typescript::render(&model(&shapes)),
        ShapesFormat::Go => go::render(&model(&shapes)),
        ShapesFormat::Py => python::render(&model(&shapes)),
    }
}

/// A type as every language needs it.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    String,
    Number,
    /// An integer; `format` is schemars' (`uint64`, `int32`, …) when it gave one.
    Integer(Option<String>),
    Boolean,
    Null,
    /// Anything (an empty schema).
    Unknown,
    /// An object whose keys are not listed (a mirror object passed through).
    OpenObject,
    Array(Box<Ty>),
    /// A declared object type.
    Named(String),
    /// One of several string values.
    Enum(Vec<String>),
    /// One of several types (a zod union, a type list).
    Union(Vec<Ty>),
}

impl Ty {
    /// This type without `Null` among its alternatives, and whether it had it.
    pub fn without_null(&self) -> (Ty, bool) {
        match self {
            Ty::Union(options) if options.contains(&Ty::Null) => {
                let rest: Vec<Ty> = options
                    .iter()
                    .filter(|t| **t != Ty::Null)
                    .cloned()
                    .collect();
                let ty = match rest.len() {
                    0 => Ty::Null,
                    1 => rest.into_iter().next().expect("one option"),
                    _ => Ty::Union(rest),
                };
                (ty, true)
            }
            other => (other.clone(), false),
        }
    }
}

/// One property of an object type.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The JSON key.
    pub name: String,
    pub ty: Ty,
    pub required: bool,
    pub doc: Option<String>,
}

/// A declared object type.
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    pub name: String,
    pub doc: Option<String>,
    pub fields: Vec<Field>,
}

/// One tool's three root types.
#[derive(Clone, Debug)]
pub struct ToolTypes {
    pub method: &'static str,
    pub raw_params: Ty,
    pub normalised_params: Ty,
    pub core_action_result: Ty,
}

/// Every declaration, in order of first use, and each tool's roots.
#[derive(Clone, Debug, Default)]
pub struct Model {
    pub decls: Vec<Decl>,
    pub tools: Vec<ToolTypes>,
}

/// `transfer_hbar_tool` → `TransferHbar`; `hbarTransfers` → `HbarTransfers`.
pub fn pascal(text: &str) -> String {
    let text = text.strip_suffix("_tool").unwrap_or(text);
    let mut out = String::with_capacity(text.len());
    let mut upper = true;
    for c in text.chars() {
        if !c.is_ascii_alphanumeric() {
            upper = true;
            continue;
        }
        if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    out
}

/// Build the model of every tool's shapes.
pub fn model(shapes: &[ToolShapes]) -> Model {
    let mut model = Model::default();
    for tool in shapes {
        let prefix = pascal(tool.method);
        let raw_params = model.root(&format!("{prefix}RawParams"), &tool.raw_params);
        let normalised_params = model.root(
            &format!("{prefix}NormalisedParams"),
            &tool.normalised_params,
        );
        let core_action_result = model.root(
            &format!("{prefix}CoreActionResult"),
            &tool.core_action_result,
        );
        model.tools.push(ToolTypes {
            method: tool.method,
            raw_params,
            normalised_params,
            core_action_result,
        });
    }
    model
}

impl Model {
    fn root(&mut self, name: &str, schema: &Value) -> Ty {
        let defs = schema
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Walk {
            model: self,
            defs: &defs,
            prefix: name,
            resolved: Default::default(),
        }
        .ty(name, schema)
    }

    /// Declare `decl`, or reuse an identical declaration of the same name; a different one of
    /// the same name gets `fallback` as its name.
    fn declare(&mut self, decl: Decl, fallback: &str) -> String {
        if let Some(existing) = self.decls.iter().find(|d| d.name == decl.name) {
            if *existing == decl {
                return decl.name;
            }
            let mut decl = decl;
            decl.name = fallback.to_owned();
            return self.declare(decl, &format!("{fallback}_"));
        }
        let name = decl.name.clone();
        self.decls.push(decl);
        name
    }
}

struct Walk<'a> {
    model: &'a mut Model,
    defs: &'a Map<String, Value>,
    /// The root type's name, prefixed to `$defs` names that collide across tools.
    prefix: &'a str,
    /// `$defs` entries already declared under this root: name → the name used.
    resolved: std::collections::HashMap<String, String>,
}

impl Walk<'_> {
    /// The type of `schema`, declaring objects as `name`.
    fn ty(&mut self, name: &str, schema: &Value) -> Ty {
        let Some(schema) = schema.as_object() else {
            return Ty::Unknown;
        };
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            return self.reference(reference);
        }
        if let Some(options) = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
        {
            let tys: Vec<Ty> = options
                .iter()
                .enumerate()
                .map(|(i, s)| self.ty(&format!("{name}{}", i + 1), s))
                .collect();
            return union(tys);
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            return enum_of(values);
        }
        if let Some(value) = schema.get("const") {
            return enum_of(std::slice::from_ref(value));
        }
        match schema.get("type") {
            Some(Value::String(t)) => self.typed(name, t, schema),
            Some(Value::Array(types)) => {
                let tys = types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|t| self.typed(name, t, schema))
                    .collect();
                union(tys)
            }
            _ if schema.contains_key("properties") => self.typed(name, "object", schema),
            _ => Ty::Unknown,
        }
    }

    fn typed(&mut self, name: &str, ty: &str, schema: &Map<String, Value>) -> Ty {
        match ty {
            "string" => Ty::String,
            "number" => Ty::Number,
            "integer" => Ty::Integer(
                schema
                    .get("format")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            ),
            "boolean" => Ty::Boolean,
            "null" => Ty::Null,
            "array" => {
                let items = schema.get("items").cloned().unwrap_or(Value::Bool(true));
                Ty::Array(Box::new(self.ty(&format!("{name}Item"), &items)))
            }
            "object" => self.object(name, schema),
            _ => Ty::Unknown,
        }
    }

    fn object(&mut self, name: &str, schema: &Map<String, Value>) -> Ty {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return Ty::OpenObject;
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let fields = properties
            .iter()
            .map(|(key, property)| Field {
                name: key.clone(),
                ty: self.ty(&format!("{name}{}", pascal(key)), property),
                required: required.contains(&key.as_str()),
                doc: doc_of(property),
            })
            .collect();
        let decl = Decl {
            name: name.to_owned(),
            doc: schema
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            fields,
        };
        // Names below a root carry its prefix; a `$defs` name shared by tools does not, and
        // takes it when another tool's type of that name differs.
        let fallback = if name.starts_with(self.prefix) {
            format!("{name}_")
        } else {
            format!("{}{name}", self.prefix)
        };
        Ty::Named(self.model.declare(decl, &fallback))
    }

    fn reference(&mut self, reference: &str) -> Ty {
        let Some(def) = reference.strip_prefix("#/$defs/") else {
            return Ty::Unknown;
        };
        if let Some(used) = self.resolved.get(def) {
            return Ty::Named(used.clone());
        }
        let Some(schema) = self.defs.get(def).cloned() else {
            return Ty::Unknown;
        };
        let ty = self.ty(&pascal(def), &schema);
        if let Ty::Named(used) = &ty {
            self.resolved.insert(def.to_owned(), used.clone());
        }
        ty
    }
}

fn union(mut tys: Vec<Ty>) -> Ty {
    tys.dedup();
    if tys.len() == 1 {
        return tys.pop().expect("one type");
    }
    Ty::Union(tys)
}

fn enum_of(values: &[Value]) -> Ty {
    if values.iter().all(Value::is_string) {
        return Ty::Enum(
            values
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        );
    }
    Ty::Unknown
}

fn doc_of(schema: &Value) -> Option<String> {
    let doc = schema.get("description").and_then(Value::as_str)?;
    Some(doc.trim().to_owned()).filter(|d| !d.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolRegistry;

    #[test]
    fn names_are_pascal_case_without_the_tool_suffix() {
        assert_eq!(pascal("transfer_hbar_tool"), "TransferHbar");
        assert_eq!(pascal("hbarTransfers"), "HbarTransfers");
        assert_eq!(pascal("0x"), "T0x");
    }

    #[test]
    fn every_tool_has_three_named_roots() {
        let shapes = ToolRegistry::native().shapes();
        let model = model(&shapes);
        assert_eq!(model.tools.len(), shapes.len());
        for tool in &model.tools {
            for root in [
                &tool.raw_params,
                &tool.normalised_params,
                &tool.core_action_result,
            ] {
                assert!(matches!(root, Ty::Named(_)), "{}: {root:?}", tool.method);
            }
        }
        let mut names: Vec<&str> = model.decls.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "declaration names are unique");
    }
}
