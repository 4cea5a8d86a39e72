//! CSV with a header row, through the csv crate (quoting done right).

use super::{record, Tabular};

pub fn render<T: Tabular>(rows: &[T]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(record::headers::<T>())
        .expect("writing to memory");
    for r in rows {
        w.write_record(record::cells(r)).expect("writing to memory");
    }
    w.into_inner().expect("flushing to memory")
}
