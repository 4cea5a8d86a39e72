//! A result row as a flat record: its column names read from the row type's serde fields, and
//! its cells from the row's serde form, each written as its [`Column`] declares. This is the
//! one place a row becomes text for CSV, Markdown and the terminal; JSON is the serde form
//! itself, so the same field names reach every format.

use super::Tabular;
use serde::de::{self, Deserializer, Visitor};
use serde::ser::{self, Impossible, Serialize, Serializer};
use std::fmt;

/// How one field is written as a cell where the plain form is not wanted. Plain forms: text
/// as is, numbers and booleans as Rust prints them, a missing value empty, a list joined with
/// `; `.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    field: &'static str,
    header: Option<&'static str>,
    title: Option<&'static str>,
    places: Option<usize>,
    plus: bool,
    suffix: &'static str,
    missing: &'static str,
    count: bool,
    /// A boolean written as this word when true and as nothing when false.
    flag: Option<&'static str>,
}

impl Column {
    /// The field of this name, written plainly.
    pub const fn field(field: &'static str) -> Column {
        Column {
            field,
            header: None,
            title: None,
            places: None,
            plus: false,
            suffix: "",
            missing: "",
            count: false,
            flag: None,
        }
    }

    /// In the terminal table and Markdown, write a boolean as `word` when true and leave the
    /// cell empty when false (a state a reader should see, not a column of `false`); CSV keeps
    /// `true` and `false`.
    pub const fn flag(self, word: &'static str) -> Column {
        Column {
            flag: Some(word),
            ..self
        }
    }

    /// Head the column with `header` instead of the field name.
    pub const fn header(self, header: &'static str) -> Column {
        Column {
            header: Some(header),
            ..self
        }
    }

    /// Head the column with `title` in the terminal table only (CSV and Markdown keep the
    /// header): a name for people where the field's name is terse.
    pub const fn title(self, title: &'static str) -> Column {
        Column {
            title: Some(title),
            ..self
        }
    }

    /// Write the number with this many decimal places.
    pub const fn places(self, places: usize) -> Column {
        Column {
            places: Some(places),
            ..self
        }
    }

    /// Write the number with its sign, then `suffix` (`+1.25%`).
    pub const fn signed(self, suffix: &'static str) -> Column {
        Column {
            plus: true,
            suffix,
            ..self
        }
    }

    /// Write a missing value as `missing` instead of an empty cell.
    pub const fn missing(self, missing: &'static str) -> Column {
        Column { missing, ..self }
    }

    /// Write a list as how many items it holds.
    pub const fn count(self) -> Column {
        Column {
            count: true,
            ..self
        }
    }

    fn write(&self, v: &Value, people: bool) -> String {
        match v {
            Value::Text(s) => match (self.flag.filter(|_| people), s.as_str()) {
                (Some(word), "true") => word.to_string(),
                (Some(_), "false") => String::new(),
                _ => s.clone(),
            },
            Value::Missing => self.missing.to_string(),
            Value::List(items) if self.count => items.len().to_string(),
            Value::List(items) => items
                .iter()
                .map(|i| self.write(i, people))
                .collect::<Vec<_>>()
                .join("; "),
            Value::Fields(_) => panic!("`{}` holds a struct: table rows are flat", self.field),
            Value::Float(x) => match (self.places, self.plus) {
                (Some(p), true) => format!("{x:+.p$}{}", self.suffix),
                (Some(p), false) => format!("{x:.p$}{}", self.suffix),
                (None, true) => format!("{x:+}{}", self.suffix),
                (None, false) => format!("{x}{}", self.suffix),
            },
        }
    }
}

const PLAIN: Column = Column::field("");

fn column<T: Tabular>(field: &str) -> &'static Column {
    T::COLUMNS
        .iter()
        .find(|c| c.field == field)
        .unwrap_or(&PLAIN)
}

/// The row type's field names, in declaration order.
pub fn fields<T: Tabular>() -> &'static [&'static str] {
    let mut names = FieldNames(None);
    let _ = T::deserialize(&mut names);
    names
        .0
        .expect("a Tabular row is a struct with named fields")
}

/// The column headers: field names, or the header a [`Column`] gives instead.
pub fn headers<T: Tabular>() -> Vec<String> {
    fields::<T>()
        .iter()
        .map(|f| column::<T>(f).header.unwrap_or(f).to_string())
        .collect()
}

/// The terminal table's headers: a [`Column`]'s title, else its header, else the field name
/// with its underscores as spaces.
pub fn titles<T: Tabular>() -> Vec<String> {
    fields::<T>()
        .iter()
        .map(|f| {
            let c = column::<T>(f);
            match (c.title, c.header) {
                (Some(t), _) => t.to_string(),
                (None, Some(h)) => h.to_string(),
                (None, None) => f.replace('_', " "),
            }
        })
        .collect()
}

/// One row's cells, in field order, as CSV writes them.
pub fn cells<T: Tabular>(row: &T) -> Vec<String> {
    cells_with(row, false)
}

/// One row's cells as people read them (the terminal table, Markdown): flags as words.
pub fn cells_for_people<T: Tabular>(row: &T) -> Vec<String> {
    cells_with(row, true)
}

fn cells_with<T: Tabular>(row: &T, people: bool) -> Vec<String> {
    let fields = match row.serialize(Cell) {
        Ok(Value::Fields(fields)) => fields,
        Ok(_) => panic!("a Tabular row serialises as a struct"),
        Err(e) => panic!("a Tabular row serialises as a flat struct: {e}"),
    };
    fields
        .iter()
        .map(|(field, v)| column::<T>(field).write(v, people))
        .collect()
}

/// Positions of the terminal's columns ([`Tabular::BRIEF`]); all when it names none.
pub fn brief<T: Tabular>() -> Vec<usize> {
    let fields = fields::<T>();
    if T::BRIEF.is_empty() {
        return (0..fields.len()).collect();
    }
    T::BRIEF
        .iter()
        .map(|b| {
            fields
                .iter()
                .position(|f| f == b)
                .unwrap_or_else(|| panic!("BRIEF names `{b}`, not a field"))
        })
        .collect()
}

/// Every name in [`Tabular::COLUMNS`] and [`Tabular::BRIEF`] is a field of the row.
pub fn check_columns<T: Tabular>() -> Result<(), String> {
    let fields = fields::<T>();
    let names = T::COLUMNS
        .iter()
        .map(|c| c.field)
        .chain(T::BRIEF.iter().copied())
        .chain(T::CONTEXT.iter().copied())
        .chain(T::NOTES.iter().copied())
        .chain([T::GROUP].into_iter().filter(|n| !n.is_empty()));
    match names.into_iter().find(|n| !fields.contains(n)) {
        Some(n) => Err(format!("`{n}` is not a field")),
        None => Ok(()),
    }
}

/// A field's serde form, as far as a flat row needs.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Text(String),
    Float(f64),
    Missing,
    List(Vec<Value>),
    /// A struct: the row itself (a field holding one is refused when written).
    Fields(Vec<(&'static str, Value)>),
}

#[derive(Debug)]
struct Unsupported(String);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Unsupported {}
impl ser::Error for Unsupported {
    fn custom<M: fmt::Display>(msg: M) -> Self {
        Unsupported(msg.to_string())
    }
}

fn unsupported<T>(what: &str) -> Result<T, Unsupported> {
    Err(Unsupported(format!("a table cell cannot hold {what}")))
}

/// Turns one field's value into a [`Value`].
struct Cell;

/// Collects a list field's items.
struct List(Vec<Value>);

impl Serializer for Cell {
    type Ok = Value;
    type Error = Unsupported;
    type SerializeSeq = List;
    type SerializeTuple = Impossible<Value, Unsupported>;
    type SerializeTupleStruct = Impossible<Value, Unsupported>;
    type SerializeTupleVariant = Impossible<Value, Unsupported>;
    type SerializeMap = Impossible<Value, Unsupported>;
    type SerializeStruct = Record;
    type SerializeStructVariant = Impossible<Value, Unsupported>;

    fn serialize_bool(self, v: bool) -> Result<Value, Unsupported> {
        Ok(Value::Text(v.to_string()))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, Unsupported> {
        Ok(Value::Text(v.to_string()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, Unsupported> {
        Ok(Value::Text(v.to_string()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, Unsupported> {
        Ok(Value::Text(v.to_string()))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, Unsupported> {
        Ok(Value::Text(v.to_string()))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, Unsupported> {
        Ok(Value::Text(v.to_string()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, Unsupported> {
        Ok(Value::Text(v.to_string()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, Unsupported> {
        Ok(Value::Text(v.to_string()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, Unsupported> {
        Ok(Value::Text(v.to_string()))
    }
    fn serialize_f32(self, _: f32) -> Result<Value, Unsupported> {
        // Widening would print digits the f32 never had; rows carry f64.
        unsupported("an f32")
    }
    fn serialize_f64(self, v: f64) -> Result<Value, Unsupported> {
        Ok(Value::Float(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, Unsupported> {
        Ok(Value::Text(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, Unsupported> {
        Ok(Value::Text(v.to_string()))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Value, Unsupported> {
        unsupported("bytes")
    }
    fn serialize_none(self) -> Result<Value, Unsupported> {
        Ok(Value::Missing)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<Value, Unsupported> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, Unsupported> {
        Ok(Value::Missing)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Value, Unsupported> {
        Ok(Value::Missing)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Value, Unsupported> {
        Ok(Value::Text(variant.to_string()))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Value, Unsupported> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Value, Unsupported> {
        unsupported("an enum with data")
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<List, Unsupported> {
        Ok(List(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unsupported> {
        unsupported("a tuple")
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Unsupported> {
        unsupported("a tuple")
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        unsupported("an enum with data")
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unsupported> {
        unsupported("a map")
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Record, Unsupported> {
        Ok(Record(Vec::with_capacity(len)))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        unsupported("an enum with data")
    }
}

/// Collects a struct's fields as (name, value): the row itself.
struct Record(Vec<(&'static str, Value)>);

impl ser::SerializeStruct for Record {
    type Ok = Value;
    type Error = Unsupported;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        self.0.push((key, value.serialize(Cell)?));
        Ok(())
    }
    fn end(self) -> Result<Value, Unsupported> {
        Ok(Value::Fields(self.0))
    }
}

impl ser::SerializeSeq for List {
    type Ok = Value;
    type Error = Unsupported;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Unsupported> {
        self.0.push(v.serialize(Cell)?);
        Ok(())
    }
    fn end(self) -> Result<Value, Unsupported> {
        Ok(Value::List(self.0))
    }
}

/// A deserializer that reads nothing: it only hears the field names serde's derive passes to
/// `deserialize_struct`, so the headers exist even when there are no rows to serialise.
struct FieldNames(Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for &mut FieldNames {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only field names are read"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0 = Some(fields);
        Err(de::Error::custom("only field names are read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize)]
    struct Row {
        name: String,
        share: f64,
        change: Option<f64>,
        tags: Vec<String>,
        ok: bool,
    }

    impl Tabular for Row {
        const COLUMNS: &'static [Column] = &[
            Column::field("share").places(1),
            Column::field("change")
                .header("delta")
                .places(2)
                .signed("%")
                .missing("-"),
            Column::field("tags").count(),
        ];
        const BRIEF: &'static [&'static str] = &["ok", "name"];
    }

    #[test]
    fn cells_follow_the_declared_columns() {
        let r = Row {
            name: "a|b".into(),
            share: 48.25,
            change: Some(1.5),
            tags: vec!["x".into(), "y".into()],
            ok: true,
        };
        assert_eq!(headers::<Row>(), ["name", "share", "delta", "tags", "ok"]);
        assert_eq!(cells(&r), ["a|b", "48.2", "+1.50%", "2", "true"]);
        let r = Row { change: None, ..r };
        assert_eq!(cells(&r)[2], "-");
        assert_eq!(brief::<Row>(), [4, 0]);
        assert_eq!(check_columns::<Row>(), Ok(()));
    }
}
