//! Cards for models no hand card names: the prices, tiers and window come from the model's
//! LiteLLM entry, and what the table does not say (how the provider renders tools, the
//! tokenizer that stands in for the model's, the cache rule and its minimum) from the nearest
//! hand card of the same provider and generation, named in the card's `assumed` list so that
//! every figure it prices says so.
//!
//! The generations: a Claude model counts with its tokenizer family, counted exactly
//! (`tokens::claude_exact`): claude-v3 up to the 4.6 models, claude-v4.7 for Opus 4.7,
//! claude-v5 for Opus 4.8 and the 5.x models (ctok 1.3.0's measured routing); it takes its other
//! rules from the 4.6 or Haiku 4.5 card before 4.7 and from claude-opus-5's from 4.7 on
//! (Anthropic: the tokenizer changed with Opus 4.7, the providers' documentation). OpenAI models take gpt-4o's rules up to gpt-4.1 and
//! gpt-5.4's after; from gpt-5.5 the prompt cache keeps entries 24 hours, and a model whose entry
//! prices cache writes (gpt-5.6 and later) is billed for them.

use super::litellm::Snapshot;
use super::PriceCard;

/// The card of `id` priced from the snapshot, if the snapshot prices it as a chat model and
/// toolcost has a card of its provider to inherit from.
pub fn derive(id: &str, snap: &Snapshot) -> Option<PriceCard> {
    let key = candidates(id).into_iter().find(|k| snap.is_chat(k))?;
    derive_key(id, &key, snap)
}

/// The card of `id` priced from the snapshot's entry `key`.
pub fn derive_key(id: &str, key: &str, snap: &Snapshot) -> Option<PriceCard> {
    let key = key.to_string();
    let e = snap.entry(&key)?;
    // The model's own name, lower case, without a deployment path (`azure/eu/gpt-4o`).
    let lower = key.to_lowercase();
    let lower = lower.rsplit('/').next().unwrap_or(&lower).to_string();
    let parent_id = parent(e.provider.as_deref().unwrap_or(""), &lower)?;
    let parent = PriceCard::all().iter().find(|c| c.id == parent_id)?;
    let input = e.input?;
    let output = e.output?;
    let anthropic = parent.render.starts_with("anthropic");
    // An open-weight model renders by its family's chat template and counts with its family's
    // vocabulary; only the cache rule comes from the parent.
    let template = crate::billing::render::open::of_model(&lower);
    let mut assumed = vec![match (anthropic, template) {
        (true, _) => format!("render rules, cache rule and minimum as {}'s", parent.id),
        (false, Some(t)) => format!(
            "chat template {} chosen by the model's name; cache rule and minimum as {}'s",
            t.source(),
            parent.id
        ),
        (false, None) => format!(
            "render rules, tokenizer, cache rule and minimum as {}'s",
            parent.id
        ),
    }];
    if let Some((tok, false)) = template.map(|t| t.tokenizer()) {
        assumed.push(format!(
            "tokenizer {}: the model's own vocabulary is not bundled, this one stands in",
            tok.name()
        ));
    }
    let cached_input = e.cached_input.unwrap_or_else(|| {
        assumed.push("no cache-read price in the table: reads priced as input".into());
        input
    });
    let cache_write = match e.cache_write {
        Some(w) => w,
        None if anthropic => {
            assumed.push("no cache-write price in the table: 1.25x input, Anthropic's rule".into());
            input * 1.25
        }
        None => input,
    };
    let context_window = e.context_window.unwrap_or_else(|| {
        assumed.push(format!("context window as {}'s", parent.id));
        parent.context_window
    });
    let (cache, cache_source) = cache_rule(parent, &lower, input, e.cache_write);
    if template.is_none() || lower.contains("kimi") {
        assumed.extend(parent.assumed.iter().cloned());
    } else {
        assumed
            .push("automatic prefix caching with no minimum, as toolcost assumes for Kimi".into());
    }
    // OpenAI's cookbook constants depend on the model (func_init 10 for gpt-4 and gpt-3.5);
    // a model it does not name renders as its parent does.
    // A Claude model the tool-use prompt table names renders with its own prompt.
    let render = match parent.render.split_once(':').map(|(k, _)| k) {
        Some("openai") if lower.starts_with("gpt-") => format!("openai:{lower}"),
        Some("anthropic") if crate::billing::render::claude::tool_prompt(&lower).is_some() => {
            format!("anthropic:{lower}")
        }
        // A Gemini model bills by its generation's rules (the Developer API's: the format
        // toolcost speaks for Gemini).
        _ if parent.render.starts_with("gemini") => format!("gemini:{lower}"),
        _ => match template {
            Some(t) => format!("open:{}", t.name()),
            None => parent.render.clone(),
        },
    };
    // gpt-4 (not 4o or 4.1) and gpt-3.5 count with cl100k.
    let cl100k = lower.starts_with("gpt-3")
        || (lower.starts_with("gpt-4")
            && !lower.starts_with("gpt-4o")
            && !lower.starts_with("gpt-4.1"));
    let tokenizer = match cl100k {
        true => {
            assumed.push("tokenizer cl100k (the gpt-4 and gpt-3.5 generation's)".into());
            "cl100k".to_string()
        }
        // A Claude model counts with its generation's tokenizer family, whichever card it
        // inherits the rest from.
        false if anthropic => {
            let family = crate::tokens::claude_exact::Family::of_model(&lower)
                .unwrap_or(crate::tokens::claude_exact::Family::V5);
            assumed.push(format!(
                "tokenizer {} by the model's generation (the family measured on {}; ctok 1.3.0's routing of generations to families, read 2026-12-03)",
                family.name(),
                family.measured_on()
            ));
            family.name().to_string()
        }
        false => match template {
            Some(t) => t.tokenizer().0.name().to_string(),
            None => parent.tokenizer.clone(),
        },
    };
    let (tiers, cache_write_long) = super::extras(&e, input, cached_input, cache_write, output);
    Some(PriceCard {
        id: id.to_string(),
        render,
        tokenizer,
        context_window,
        input,
        cached_input,
        cache_write,
        output,
        min_cacheable: parent.min_cacheable,
        cache,
        cache_source,
        assumed,
        source: format!(
            "{} entry `{key}`; what the table does not say is {}'s",
            snap.describe(),
            parent.id
        ),
        date: snap.date.clone(),
        litellm: Some(key),
        tiers,
        cache_write_long,
        inherits: Some(parent.id.clone()),
    })
}

/// The keys to look `id` up under: as given, lower case, without a provider or gateway path
/// (`anthropic/...`, `@cf/moonshotai/...`), and without a date suffix (`-20260205`,
/// `-2026-04-23`).
pub(super) fn candidates(id: &str) -> Vec<String> {
    let mut out = vec![id.to_string(), id.to_lowercase()];
    if let Some((_, last)) = id.to_lowercase().rsplit_once('/') {
        out.push(last.to_string());
    }
    let undated: Vec<String> = out.iter().filter_map(|k| strip_date(k)).collect();
    out.extend(undated);
    out
}

fn strip_date(k: &str) -> Option<String> {
    let b = k.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if b.len() > 9 && b[b.len() - 9] == b'-' && digits(&b[b.len() - 8..]) {
        return Some(k[..k.len() - 9].to_string());
    }
    if b.len() > 11
        && b[b.len() - 11] == b'-'
        && b[b.len() - 6] == b'-'
        && b[b.len() - 3] == b'-'
        && digits(&b[b.len() - 10..b.len() - 6])
        && digits(&b[b.len() - 5..b.len() - 3])
        && digits(&b[b.len() - 2..])
    {
        return Some(k[..k.len() - 11].to_string());
    }
    None
}

/// The hand card a provider's model inherits from; `k` is the model's name in lower case,
/// without a deployment path.
fn parent(provider: &str, k: &str) -> Option<&'static str> {
    // The open-weight families (whoever serves them) take their cache rule from the Kimi card.
    if k.contains("gpt-oss") {
        return Some("kimi-k2.7-code");
    }
    let claude = || match claude_version(k) {
        Some(v) if v < (4, 7) && k.contains("haiku") => "claude-haiku-4.5",
        Some(v) if v < (4, 7) => "claude-sonnet-4.6",
        // 4.7 and later, and names without a version (`claude-mythos-preview`): the current
        // generation (assumed for the latter).
        _ => "claude-opus-5",
    };
    let gpt = || {
        if k.starts_with("gpt-4.1") {
            "gpt-4.1"
        } else if k.starts_with("gpt-4") || k.starts_with("gpt-3") {
            "gpt-4o"
        } else {
            "gpt-5.4"
        }
    };
    // Google's own models: Pro models take the Pro card's rules, the others Flash's.
    let gemini = || match k.contains("-pro") {
        true => "gemini-3.1-pro-preview",
        false => "gemini-3.5-flash",
    };
    match provider {
        "anthropic" => Some(claude()),
        "openai" | "azure" => Some(gpt()),
        "gemini" | "vertex_ai" | "vertex_ai-language-models" if k.starts_with("gemini-") => {
            Some(gemini())
        }
        _ if crate::billing::render::open::of_model(k).is_some() => Some("kimi-k2.7-code"),
        // Any other host that sells a model per token (Bedrock, Vertex AI's Claude, Azure AI,
        // ...): its own prices, the hand card of the model's maker as its name says (what the
        // table does not say is assumed from that card, and said).
        _ if k.contains("claude") => Some(claude()),
        _ if k.contains("gemini") => Some(gemini()),
        _ if is_openai_model(k) => Some(gpt()),
        _ => None,
    }
}

/// Whether a model name (a host's spelling: `openai.gpt-6-sol`, `gpt-4o`) is one of OpenAI's
/// GPT, Codex or o-series models.
fn is_openai_model(k: &str) -> bool {
    let name = k.rsplit_once("openai.").map_or(k, |(_, r)| r);
    name.starts_with("gpt-")
        || name.starts_with("codex-")
        || (name.len() > 1 && name.starts_with('o') && name.as_bytes()[1].is_ascii_digit())
}

/// The (major, minor) version in a Claude model id: `claude-opus-4-6-20260205` (4, 6),
/// `claude-3-5-haiku` (3, 5), `claude-sonnet-5` (5, 0); a date is not a version.
pub fn claude_version(key: &str) -> Option<(u32, u32)> {
    let nums: Vec<u32> = key
        .split(['-', '.', '@', '/', ':'])
        .filter(|p| !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|p| p.parse().ok())
        .collect();
    let major = *nums.first()?;
    Some((major, nums.get(1).copied().unwrap_or(0)))
}

/// The (major, minor) version of a `gpt-N.M` id.
fn gpt_version(key: &str) -> Option<(u32, u32)> {
    let rest = key.strip_prefix("gpt-")?;
    let head: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let mut it = head.split('.');
    let major = it.next()?.parse().ok()?;
    Some((major, it.next().and_then(|m| m.parse().ok()).unwrap_or(0)))
}

/// The cache rule of a model priced from the table, and where it comes from.
fn cache_rule(parent: &PriceCard, key: &str, input: f64, write: Option<f64>) -> (String, String) {
    if !parent.render.starts_with("openai") {
        return (parent.cache.clone(), parent.cache_source.clone());
    }
    if write.is_some_and(|w| w > input) {
        return (
            "automatic:1:1800:writes".into(),
            "OpenAI prompt caching for gpt-5.6 and later: writes billed (the entry's cache-write price, 1.25x input) and reported as cache_write_tokens, one implicit breakpoint at the end of the prompt, no 128-token rounding, entries living 30 minutes by default (openai-python 3.57.0 PromptCacheOptions; OpenAI prompt caching guide; read 2026-12-01)".into(),
        );
    }
    if gpt_version(key).is_some_and(|v| v >= (5, 5)) {
        return (
            "automatic:128:86400".into(),
            "OpenAI prompt caching: automatic from 1,024 tokens in 128-token steps, no write charge; gpt-5.5 and later keep prompts 24 hours (openai-python 3.57.0, prompt_cache_retention; read 2026-12-01)".into(),
        );
    }
    (parent.cache.clone(), parent.cache_source.clone())
}

/// The model names closest to `id` by edit distance: hand cards and the snapshot's chat models.
pub fn closest(id: &str, snap: &Snapshot) -> Vec<String> {
    let family = id
        .rsplit('/')
        .next()
        .unwrap_or(id)
        .split(|c: char| !c.is_ascii_alphabetic())
        .find(|w| w.len() >= 3)
        .unwrap_or("")
        .to_ascii_lowercase();
    closest_in(id, &family, snap)
}

/// The five names nearest `id`, among those whose name contains `family` (a word of the id:
/// `qwen`, `mistral`, `glm`) where any does, else among all.
pub fn closest_in(id: &str, family: &str, snap: &Snapshot) -> Vec<String> {
    let id: String = id.to_lowercase().chars().take(100).collect();
    let all: Vec<String> = PriceCard::all()
        .iter()
        .map(|c| c.id.clone())
        .chain(
            snap.keys()
                .into_iter()
                .filter(|k| k.len() <= 100 && snap.is_chat(k))
                .map(str::to_string),
        )
        .filter(|n| n.to_lowercase() != id)
        .collect();
    let family = family.to_ascii_lowercase();
    let of_family: Vec<&String> = all
        .iter()
        .filter(|n| !family.is_empty() && n.to_lowercase().contains(&family))
        .collect();
    let pool: Vec<&String> = match of_family.is_empty() {
        true => all.iter().collect(),
        false => of_family,
    };
    let mut names: Vec<(usize, String)> = pool
        .into_iter()
        .map(|n| (distance(&id, &n.to_lowercase()), n.clone()))
        .collect();
    names.sort();
    names.dedup_by(|a, b| a.1 == b.1);
    names.into_iter().take(5).map(|(_, n)| n).collect()
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_from_ids() {
        assert_eq!(claude_version("claude-opus-4-6-20260205"), Some((4, 6)));
        assert_eq!(claude_version("claude-3-5-haiku-20241022"), Some((3, 5)));
        assert_eq!(claude_version("claude-sonnet-5"), Some((5, 0)));
        assert_eq!(claude_version("claude-mythos-preview"), None);
        assert_eq!(gpt_version("gpt-5.6-sol"), Some((5, 6)));
        assert_eq!(gpt_version("gpt-4o"), Some((4, 0)));
        assert_eq!(
            strip_date("claude-opus-4-6-20260205").as_deref(),
            Some("claude-opus-4-6")
        );
        assert_eq!(strip_date("gpt-5.5-2026-04-23").as_deref(), Some("gpt-5.5"));
        assert_eq!(strip_date("gpt-5.5"), None);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
    }
}
