//! Vertex AI's paths: a publisher's model under a project and a location,
//! `/{v1|v1beta1}/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}`.
//! Google's models speak the Gemini format there, Anthropic's the Messages format
//! (`:rawPredict`, `:streamRawPredict`); the key is an OAuth bearer token.

/// The API versions Vertex AI serves.
const VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// `model:method` of a Vertex AI path of `publisher`, or `None` for a path that is not Vertex
/// AI's. A Vertex AI path of another publisher, or one whose project or location is empty or
/// holds a `/` where none may be, is an error.
pub fn model_method<'p>(path: &'p str, publisher: &str) -> Result<Option<&'p str>, String> {
    let Some(after) = VERSIONS
        .iter()
        .find_map(|v| path.strip_prefix(&format!("/{v}/projects/")))
    else {
        return Ok(None);
    };
    let mut parts = after.splitn(7, '/');
    let (project, l, location, p, named, m, rest) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    let well_formed = !project.is_empty()
        && project.len() <= 128
        && l == "locations"
        && !location.is_empty()
        && location.len() <= 64
        && p == "publishers"
        && m == "models";
    if !well_formed {
        return Err(format!(
            "`{path}` is not a Vertex AI model path: /v1/projects/PROJECT/locations/LOCATION/publishers/{publisher}/models/MODEL:METHOD"
        ));
    }
    if named != publisher {
        return Err(format!(
            "`{path}` names the publisher `{named}`, whose models this endpoint does not serve (it serves `{publisher}`)"
        ));
    }
    Ok(Some(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_paths_name_their_model_and_method() {
        let p = "/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent";
        assert_eq!(
            model_method(p, "google").unwrap(),
            Some("gemini-2.5-flash:generateContent")
        );
        assert_eq!(
            model_method("/v1beta/models/m:generateContent", "google").unwrap(),
            None
        );
        assert!(model_method(p, "anthropic")
            .unwrap_err()
            .contains("publisher `google`"));
        for bad in [
            "/v1/projects//locations/l/publishers/google/models/m:x",
            "/v1/projects/p/regions/l/publishers/google/models/m:x",
            "/v1/projects/p/locations//publishers/google/models/m:x",
        ] {
            assert!(model_method(bad, "google").is_err(), "{bad}");
        }
    }
}
