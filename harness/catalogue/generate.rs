//! The seeded catalogue generator: the same profile, N and seed give the same bytes.
//!
//! Rows come from an iterator, so any N up to a million streams to disk in constant memory
//! (only the set of keys is kept, to keep them unique). Every profile starts with the fixed
//! rows the scenarios need: `NOW`, `EMAIL_SEND`, `AIG_LIST`, `ORDER_GET`, `ECHO`, `SUM`.

use super::fixed::fixed_row;
use super::profile::{KeyStyle, Profile};
use super::words::*;
use super::{Row, RowSchema, Runner};
use crate::error::{Error, Result};
use crate::json;
use crate::rng::Rng;
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// The largest catalogue `generate` accepts.
pub const MAX_ROWS: usize = 1_000_000;

/// N within what the generator accepts.
pub fn check_rows(n: usize) -> Result<usize> {
    if n > MAX_ROWS {
        return Err(Error::input(format!(
            "--rows {n} is over the limit of {MAX_ROWS}; generate at most a million rows"
        )));
    }
    Ok(n)
}

/// The index whose count lags its weighted share the most: exact proportions at any prefix.
fn quota(weights: &[f64], counts: &[usize]) -> usize {
    let total: f64 = weights.iter().sum();
    let n = (counts.iter().sum::<usize>() + 1) as f64;
    let mut best = 0;
    let mut best_gap = f64::MIN;
    for (i, w) in weights.iter().enumerate() {
        let gap = n * w / total - counts[i] as f64;
        if gap > best_gap {
            best_gap = gap;
            best = i;
        }
    }
    best
}

/// A generated row's `target` and the payload line its content ends with, both from its runner.
fn target_and_payload(
    runner: Runner,
    svc: &Service,
    verb_key: &str,
    res_phrase: &str,
    res_word: &str,
    key: &str,
    needs_id: bool,
) -> (String, String) {
    let target = match runner {
        Runner::Http => {
            let method = match verb_key {
                "CREATE" | "SEND" | "SYNC" | "EXPORT" | "QUERY" => "POST",
                "UPDATE" | "ARCHIVE" => "PATCH",
                "DELETE" => "DELETE",
                _ => "GET",
            };
            let path = res_phrase.replace(' ', "_").to_lowercase();
            format!(
                "{method} {}/{path}{}",
                svc.base,
                if needs_id { "/$1" } else { "" }
            )
        }
        Runner::Fn => format!("fn:{}", key.to_lowercase()),
        Runner::Flow => format!("flow:{}", key.to_lowercase()),
        Runner::Agent => format!("agent:{}_assistant", svc.prefix.to_lowercase()),
    };
    let payload = match runner {
        Runner::Flow => format!("STEPS: {}_{}_LIST -> {key}", svc.prefix, res_word),
        Runner::Agent => format!(
            "PROMPT: act as the {} assistant and finish the request",
            svc.display
        ),
        _ => target.clone(),
    };
    (target, payload)
}

fn mix(seed: u64, a: u64, b: u64) -> u64 {
    let mut r = Rng::new(
        seed ^ a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F),
    );
    r.next_u64()
}

/// A service rows are grouped under: named ones first, then synthesised ones.
#[derive(Debug, Clone)]
struct Service {
    prefix: String,
    display: String,
    category: String,
    auth: String,
    base: String,
    resources: Vec<usize>,
}

/// Rows of one catalogue, in order.
/// What a generated row is for, in the generator's own terms: the labels a query set is
/// written from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Intent {
    /// The verb's key word (`LIST`, `GET`, ...).
    pub verb: &'static str,
    /// The resource as prose (`invoices`, `pull requests`, ...).
    pub resource: &'static str,
    /// The service's display name.
    pub service: String,
}

pub struct Generator {
    last_intent: Option<Intent>,
    profile: Profile,
    seed: u64,
    rows: usize,
    extra: [usize; 3],
    next: usize,
    runner_counts: [usize; 4],
    /// Generated rows per schema size class (small, medium, large), assigned by quota so a
    /// catalogue's size does not hinge on how many rare large schemas a seed happens to draw.
    size_counts: [usize; 3],
    keys: HashSet<String>,
    services: Vec<Service>,
    /// Rows made and not yet returned, with their intents, in order.
    ready: std::collections::VecDeque<(Row, Option<Intent>)>,
}

/// Rows planned and made together: the plans one after another, the rows on the machine's
/// cores (an assumed size: large enough to keep both cores busy, small enough to stream).
const BATCH: usize = 4096;

/// What a generated row takes from the rows before it (its runner and size class by quota, its
/// unique key) and the random draws made to decide them. The rest of the row depends only on
/// the plan, so rows are made from their plans on any core, in any order, with the same bytes.
struct Plan {
    /// The row's random stream, where the plan left it.
    rng: Rng,
    runner: Runner,
    service: usize,
    resource: (&'static str, &'static str, &'static str),
    verb: (&'static str, &'static str, &'static str),
    res_word: &'static str,
    /// The key the row is made with (its content names it).
    key: String,
    class: usize,
    /// What an inactive row becomes once made.
    inactive: Option<Inactive>,
}

enum Inactive {
    Disabled,
    Hidden,
    /// A hidden test-shaped row: renamed after it is made.
    Probe(String),
}

impl Generator {
    /// `rows` projected rows; with `inactive`, the profile's share of disabled, hidden and
    /// test-shaped rows follows them (the projection still has `rows` tools).
    pub fn new(profile: Profile, rows: usize, seed: u64, inactive: bool) -> Generator {
        let extra = if inactive {
            profile
                .inactive_per_832
                .map(|per| (rows * per).div_ceil(832))
        } else {
            [0; 3]
        };
        let n_services = SERVICES.len().max(rows.div_ceil(24));
        let services = (0..n_services).map(|i| make_service(seed, i)).collect();
        Generator {
            last_intent: None,
            profile,
            seed,
            rows,
            extra,
            next: 0,
            runner_counts: [0; 4],
            size_counts: [0; 3],
            keys: HashSet::new(),
            services,
            ready: Default::default(),
        }
    }

    /// Rows this generator yields in all.
    pub fn len(&self) -> usize {
        self.rows + self.extra.iter().sum::<usize>()
    }

    /// The intent of the row `next()` returned last; `None` for the fixed rows.
    pub fn last_intent(&self) -> Option<&Intent> {
        self.last_intent.as_ref()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn runner_for_next(&mut self) -> Runner {
        let w = self.profile.runner_weights.map(f64::from);
        Runner::ALL[quota(&w, &self.runner_counts)]
    }

    fn size_class_for_next(&mut self) -> usize {
        let p = &self.profile;
        let w = [
            1.0 - p.share_medium - p.share_large,
            p.share_medium,
            p.share_large,
        ];
        let class = quota(&w, &self.size_counts);
        self.size_counts[class] += 1;
        class
    }

    fn count(&mut self, runner: Runner) {
        let i = Runner::ALL.iter().position(|r| *r == runner).unwrap();
        self.runner_counts[i] += 1;
    }

    fn unique_key(&mut self, base: String) -> String {
        if self.keys.insert(base.clone()) {
            return base;
        }
        for n in 2.. {
            let k = format!("{base}_{n}");
            if self.keys.insert(k.clone()) {
                return k;
            }
        }
        unreachable!()
    }

    /// Decide, in order, what a generated row takes from the rows before it.
    fn plan(&mut self, i: usize) -> Plan {
        let mut rng = Rng::new(mix(self.seed, i as u64, 1));
        let runner = self.runner_for_next();
        self.count(runner);
        let service = rng.below(self.services.len());
        let resource = RESOURCES[*rng.pick(&self.services[service].resources)];
        let verb = *rng.pick(VERBS);
        let res_word = if rng.chance(self.profile.short_resource_share) {
            resource.0.split('_').next().unwrap()
        } else {
            resource.0
        };
        let prefix = self.services[service].prefix.clone();
        let base = self.base_key(&mut rng, &prefix, res_word, verb.0);
        let key = self.unique_key(base);
        // The size class is by quota too; it draws nothing, so it may be decided here.
        let class = self.size_class_for_next();
        Plan {
            rng,
            runner,
            service,
            resource,
            verb,
            res_word,
            key,
            class,
            inactive: None,
        }
    }

    /// The intent a plan's row is generated from.
    fn intent(&self, plan: &Plan) -> Intent {
        Intent {
            verb: plan.verb.0,
            resource: plan.resource.1,
            service: self.services[plan.service].display.clone(),
        }
    }

    /// The row a plan describes (the rest of its random draws are its own).
    fn make(&self, plan: &Plan) -> Row {
        let mut rng = plan.rng.clone();
        let runner = plan.runner;
        let svc = &self.services[plan.service];
        let (_, res_phrase, id_arg) = plan.resource;
        let (verb_key, verb_phrase, returns) = plan.verb;
        let (res_word, key) = (plan.res_word, plan.key.clone());
        let what = self.what_line(
            &mut rng,
            runner,
            verb_phrase,
            res_phrase,
            &svc.display,
            returns,
        );
        let needs_id = matches!(verb_key, "GET" | "UPDATE" | "DELETE" | "ARCHIVE" | "SEND");
        let mut schema = self.schema(
            &mut rng,
            plan.class,
            needs_id.then_some((id_arg, res_phrase)),
        );
        let args: Vec<String> = schema["properties"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let example = example_args(&schema);
        let when = format!(
            "{} {} {} in {}",
            rng.pick(WHEN_OPENERS),
            verb_key.to_lowercase(),
            res_phrase,
            svc.display
        );
        let (target, payload) =
            target_and_payload(runner, svc, verb_key, res_phrase, res_word, &key, needs_id);
        let content = format!(
            "# WHAT: {what}\n# WHEN_TO_USE: {when}\n# ARGS: {}\n# EX: [{key}]{}[/{key}]\n{payload}\n",
            if args.is_empty() { "none".to_string() } else { args.join(", ") },
            json::compact(&example),
        );
        if rng.chance(self.profile.legacy_violation_share) {
            if let Some(first) = args.first() {
                schema["properties"]
                    .as_object_mut()
                    .unwrap()
                    .shift_remove(first);
                schema["required"] = json!([first]);
            }
        }
        let row = Row {
            key,
            runner,
            target: Some(target),
            auth: Some(format!("bearer:{}", svc.auth)),
            content,
            category: Some(svc.category.clone()),
            planner_rank: if rng.chance(0.1) { 50 } else { 100 },
            enabled: true,
            planner_visible: true,
            input_schema: None,
        };
        let mut row = self.fit(row, schema);
        match &plan.inactive {
            None => {}
            Some(Inactive::Disabled) => row.enabled = false,
            Some(Inactive::Hidden) => row.planner_visible = false,
            Some(Inactive::Probe(key)) => {
                row.key = key.clone();
                row.planner_visible = false;
            }
        }
        row
    }

    /// Make the next batch of rows: plans (and fixed rows) in order, then the planned rows on
    /// the machine's cores.
    fn refill(&mut self) {
        enum Next {
            Fixed(Row),
            Planned(Plan),
        }
        let end = self.len().min(self.next + BATCH);
        let mut batch = Vec::with_capacity(end - self.next);
        for i in self.next..end {
            if i < self.rows {
                if let Some(row) = fixed_row(i) {
                    self.keys.insert(row.key.clone());
                    self.count(row.runner);
                    batch.push(Next::Fixed(row));
                    continue;
                }
                batch.push(Next::Planned(self.plan(i)));
                continue;
            }
            let mut plan = self.plan(i);
            let j = i - self.rows;
            plan.inactive = Some(if j < self.extra[0] {
                Inactive::Disabled
            } else if j < self.extra[0] + self.extra[1] {
                Inactive::Hidden
            } else {
                // The generated key is given up for a probe's name.
                self.keys.remove(&plan.key);
                Inactive::Probe(self.unique_key(format!("TEST_PROBE_{j}")))
            });
            batch.push(Next::Planned(plan));
        }
        self.next = end;
        let this = &*self;
        let made = crate::sync::map_on_cores(&batch, |n| match n {
            Next::Fixed(row) => (row.clone(), None),
            Next::Planned(plan) => (this.make(plan), Some(this.intent(plan))),
        });
        self.ready.extend(made);
    }

    /// The key before it is made unique: service prefix, resource and verb in the profile's style.
    fn base_key(&self, rng: &mut Rng, prefix: &str, res_word: &str, verb_key: &str) -> String {
        match self.profile.key_style {
            KeyStyle::UpperSnake => {
                if rng.chance(0.5) {
                    format!("{}_{}_{}", prefix, res_word, verb_key)
                } else {
                    format!("{}_{}_{}", prefix, verb_key, res_word)
                }
            }
            KeyStyle::Snake => {
                let s = format!("{}_{}", verb_key, res_word).to_lowercase();
                if rng.chance(0.3) {
                    format!("{}_{s}", prefix.to_lowercase())
                } else {
                    s
                }
            }
        }
    }

    /// Drop trailing arguments until the projected definition fits the profile's cap; the
    /// row keeps the schema that fits.
    fn fit(&self, mut row: Row, mut schema: Value) -> Row {
        loop {
            let spaced = row.projected_spaced_len(&schema);
            match schema["properties"].as_object_mut() {
                Some(p) if spaced > self.profile.max_definition_bytes && !p.is_empty() => {
                    let last = p.keys().next_back().cloned().unwrap();
                    p.shift_remove(&last);
                    if let Some(req) = schema.get_mut("required").and_then(Value::as_array_mut) {
                        req.retain(|r| r != last.as_str());
                    }
                }
                _ => {
                    row.input_schema = Some(RowSchema::new(&schema));
                    return row;
                }
            }
        }
    }

    fn what_line(
        &self,
        rng: &mut Rng,
        runner: Runner,
        verb: &str,
        res: &str,
        svc: &str,
        returns: &str,
    ) -> String {
        let target_len = rng.range(self.profile.what_chars);
        let lead = match runner {
            Runner::Flow => format!(
                "Run the multi-step flow that will {} {res} in {svc}",
                verb.to_lowercase()
            ),
            Runner::Agent => format!(
                "Ask the {svc} agent to {} {res} on your behalf",
                verb.to_lowercase()
            ),
            _ => format!("{verb} {res} in {svc}"),
        };
        let mut clauses = vec![rng.pick(CLAUSES).to_string()];
        let mut sentences = vec![format!("Returns {returns}.")];
        loop {
            let text = format!("{lead}, {}. {}", clauses.join(", "), sentences.join(" "));
            if text.len() >= target_len || clauses.len() + sentences.len() > 8 {
                return text;
            }
            if rng.chance(0.5) {
                let c = rng.pick(CLAUSES).to_string();
                if !clauses.contains(&c) {
                    clauses.push(c);
                }
            } else {
                let s = rng.pick(CAVEATS).to_string();
                if !sentences.contains(&s) {
                    sentences.push(s);
                }
            }
        }
    }

    fn schema(&self, rng: &mut Rng, class: usize, id: Option<(&str, &str)>) -> Value {
        let p = &self.profile;
        let n = rng.range([p.props_small, p.props_medium, p.props_large][class]);
        let mut props = Map::new();
        let mut required = Vec::new();
        if let Some((id_arg, res)) = id {
            props.insert(
                id_arg.to_string(),
                json!({"type": "string", "description": format!("Identifier of the {} to act on", singular(res))}),
            );
            required.push(id_arg.to_string());
        }
        let mut tries = 0;
        while props.len() < n + usize::from(id.is_some()) && tries < 200 {
            tries += 1;
            let (name, ty, desc) = *rng.pick(ARGS);
            let name = if props.contains_key(name) {
                format!("{}_{name}", rng.pick(QUALIFIERS))
            } else {
                name.to_string()
            };
            if props.contains_key(&name) {
                continue;
            }
            let detail = rng.range(p.arg_detail_sentences);
            let node = arg_schema(rng, ty, desc, detail);
            if required.len() < 3 && rng.chance(0.25) {
                required.push(name.clone());
            }
            props.insert(name, node);
        }
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(props));
        if !required.is_empty() {
            schema.insert("required".into(), json!(required));
        }
        Value::Object(schema)
    }
}

fn singular(res: &str) -> String {
    res.strip_suffix('s').unwrap_or(res).to_string()
}

fn arg_schema(rng: &mut Rng, ty: &str, desc: &str, detail: usize) -> Value {
    let mut description = desc.to_string();
    for _ in 0..detail {
        description.push_str(". ");
        description.push_str(rng.pick(CAVEATS).trim_end_matches('.'));
    }
    let mut parts = ty.split('|');
    let head = parts.next().unwrap();
    let values: Vec<&str> = parts.collect();
    let mut node = Map::new();
    match head.split(':').collect::<Vec<_>>().as_slice() {
        ["nested", shape] => {
            let fields = NESTED
                .iter()
                .find(|(n, _)| n == shape)
                .map(|(_, f)| *f)
                .unwrap_or(&[]);
            let mut props = Map::new();
            for (n, t, d) in fields {
                props.insert(n.to_string(), arg_schema(rng, t, d, 0));
            }
            node.insert("type".into(), json!("object"));
            node.insert("description".into(), json!(description));
            node.insert("properties".into(), Value::Object(props));
            node.insert("required".into(), json!([fields[0].0]));
            return Value::Object(node);
        }
        ["array", item @ ..] => {
            node.insert("type".into(), json!("array"));
            node.insert("description".into(), json!(description));
            let mut items = Map::new();
            items.insert(
                "type".into(),
                json!(item.first().copied().unwrap_or("string")),
            );
            if let Some(f) = item.get(1) {
                items.insert("format".into(), json!(f));
            }
            if !values.is_empty() {
                items.insert("enum".into(), json!(values));
            }
            node.insert("items".into(), Value::Object(items));
        }
        [t, format] => {
            node.insert("type".into(), json!(t));
            node.insert("description".into(), json!(description));
            node.insert("format".into(), json!(format));
        }
        [t] => {
            node.insert("type".into(), json!(t));
            node.insert("description".into(), json!(description));
            if !values.is_empty() {
                node.insert("enum".into(), json!(values));
            }
            if *t == "integer" && rng.chance(0.5) {
                node.insert("minimum".into(), json!(1));
                node.insert("maximum".into(), json!(100));
            }
        }
        _ => {
            node.insert("type".into(), json!("string"));
        }
    }
    Value::Object(node)
}

/// Example arguments for the `# EX:` line: the required ones and up to two more.
fn example_args(schema: &Value) -> Value {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    if let Some(props) = schema["properties"].as_object() {
        for (i, (name, node)) in props.iter().enumerate() {
            if required.contains(&name.as_str()) || i < 2 {
                out.insert(name.clone(), example_value(node));
            }
        }
    }
    Value::Object(out)
}

fn example_value(node: &Value) -> Value {
    if let Some(first) = node["enum"].as_array().and_then(|a| a.first()) {
        return first.clone();
    }
    match (node["type"].as_str(), node["format"].as_str()) {
        (Some("integer"), _) => json!(25),
        (Some("number"), _) => json!(1.5),
        (Some("boolean"), _) => json!(false),
        (Some("array"), _) => json!([example_value(&node["items"])]),
        (Some("object"), _) => example_args(node),
        (_, Some("email")) => json!("ops@example.com"),
        (_, Some("date-time")) => json!("2026-07-25T09:00:00Z"),
        (_, Some("date")) => json!("2026-07-25"),
        (_, Some("uri")) => json!("https://example.com/hook"),
        _ => json!("abc123"),
    }
}

fn make_service(seed: u64, i: usize) -> Service {
    let mut rng = Rng::new(mix(seed, i as u64, 2));
    let random: Vec<usize> = (0..8).map(|_| rng.below(RESOURCES.len())).collect();
    if let Some(&(prefix, display, category, auth, base)) = SERVICES.get(i) {
        let resources = SERVICE_RESOURCES
            .iter()
            .find(|(p, _)| *p == prefix)
            .map(|(_, keys)| {
                keys.iter()
                    .filter_map(|k| RESOURCES.iter().position(|r| r.0 == *k))
                    .collect()
            })
            .unwrap_or(random);
        return Service {
            prefix: prefix.into(),
            display: display.into(),
            category: category.into(),
            auth: auth.into(),
            base: base.into(),
            resources,
        };
    }
    let syllables = rng.range([2, 3]);
    let name: String = (0..syllables).map(|_| *rng.pick(SYLLABLES)).collect();
    let resources = random;
    let prefix = format!("{}{}", name.to_uppercase(), i % 100);
    let mut display = name.clone();
    display[..1].make_ascii_uppercase();
    Service {
        auth: format!("{}_API_KEY", name.to_uppercase()),
        base: format!("https://api.{name}.example.com/v1"),
        category: rng.pick(CATEGORIES).to_string(),
        prefix,
        display,
        resources,
    }
}

impl Iterator for Generator {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        if self.ready.is_empty() && self.next < self.len() {
            self.refill();
        }
        let (row, intent) = self.ready.pop_front()?;
        self.last_intent = intent;
        Some(row)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.len() - self.next + self.ready.len();
        (left, Some(left))
    }
}

/// Generate a whole catalogue in memory.
pub fn generate(profile: Profile, rows: usize, seed: u64) -> Vec<Row> {
    Generator::new(profile, rows, seed, false).collect()
}
