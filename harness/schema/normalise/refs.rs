//! `$ref`s: followed within the expansion budget, with their siblings applied beside the target.

use super::{
    into_map, Effect, Exceeded, Normaliser, ANNOTATIONS, MAX_EXPANDED_BYTES, MAX_REF_CHAIN,
};
use serde_json::{json, Map, Value};

/// A node's size as schema text, roughly (strings and keys by length, 2 per value), counted
/// only up to `cap` so that weighing stays as cheap as the budget it guards.
fn weight(v: &Value, cap: usize) -> usize {
    let mut total = 0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        total += 2;
        match v {
            Value::String(s) => total += s.len(),
            Value::Array(a) => stack.extend(a.iter()),
            Value::Object(m) => {
                for (k, x) in m {
                    total += k.len();
                    stack.push(x);
                }
            }
            Value::Number(_) | Value::Bool(_) | Value::Null => total += 4,
        }
        if total > cap {
            break;
        }
    }
    total
}

impl Normaliser<'_> {
    /// Whether a `$ref` to `target` at `ptr` may still be expanded; records the first refusal.
    fn afford(&self, target: &Value, ptr: &str, chain: usize) -> bool {
        if self.exceeded.borrow().is_some() {
            return false;
        }
        let message = if chain > MAX_REF_CHAIN {
            format!("`$ref`s nest more than {MAX_REF_CHAIN} deep; inline some definitions")
        } else {
            let left = MAX_EXPANDED_BYTES - self.spent.get();
            let w = weight(target, left);
            if w <= left {
                self.spent.set(self.spent.get() + w);
                return true;
            }
            format!(
                "expanding `$ref`s would inline more than {MAX_EXPANDED_BYTES} bytes of schema (definitions that refer to others several times multiply); refer to fewer definitions or inline them"
            )
        };
        *self.exceeded.borrow_mut() = Some(Exceeded {
            pointer: format!("{ptr}/$ref"),
            message,
        });
        false
    }

    /// The node with a local `$ref` followed within the budget and its siblings applied beside
    /// the target (JSON Schema 2020-12, the MCP default dialect); a ref that cannot be followed
    /// becomes an object.
    pub(super) fn with_reference(
        &self,
        own: Map<String, Value>,
        r: &Value,
        depth: usize,
        refs: &mut Vec<String>,
        ptr: &str,
    ) -> Map<String, Value> {
        let at = format!("{ptr}/$ref");
        let why_not = match r.as_str() {
            None => Some("is not a string".to_string()),
            Some(r) if refs.iter().any(|seen| seen == r) => {
                Some(format!("`{r}` refers back to itself"))
            }
            Some(r) => match r.strip_prefix('#').map(|p| (p, self.root.pointer(p))) {
                None => Some(format!("`{r}` is not a local reference")),
                Some((_, None)) => Some(format!("`{r}` points at nothing")),
                Some((p, Some(t))) if self.afford(t, ptr, refs.len()) => {
                    refs.push(r.to_string());
                    let target = into_map(self.part(t, depth, refs, p));
                    refs.pop();
                    let annotations: Vec<(String, Value)> = own
                        .iter()
                        .filter(|(k, _)| ANNOTATIONS.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    let mut merged = self.conjoin(target, own, ptr);
                    merged.extend(annotations);
                    return merged;
                }
                Some(_) => Some(format!("`{r}` exceeds the expansion budget")),
            },
        };
        let mut own = own;
        let served = if own.contains_key("type") {
            "its siblings alone"
        } else {
            own.insert("type".into(), json!("object"));
            "an object"
        };
        self.change(
            &at,
            Effect::Changes,
            format!(
                "`$ref` {} and cannot be inlined; served as {served}",
                why_not.unwrap_or_default()
            ),
        );
        own
    }
}
