//! JSON: an array of the rows' serde form, pretty-printed.

use super::Tabular;

pub fn render<T: Tabular>(rows: &[T]) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(rows).expect("rows serialise");
    out.push(b'\n');
    out
}
