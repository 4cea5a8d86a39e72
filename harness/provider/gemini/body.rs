//! Reading a received Gemini body as Google's parser reads it: camelCase and the snake_case
//! some clients write, one Content or Part where a list is due, a bare string system
//! instruction, and every `functionDeclarations` group read as one list of entries.

use serde_json::{json, Map, Value};

/// The keys of the protocol written in snake_case by some clients, and their camelCase. Only
/// keys at protocol positions are read this way (see [`camel_case`]): a schema's property
/// names and a call's arguments are the user's own and keep their spelling.
const SNAKE: &[(&str, &str)] = &[
    ("system_instruction", "systemInstruction"),
    ("tool_config", "toolConfig"),
    ("function_calling_config", "functionCallingConfig"),
    ("allowed_function_names", "allowedFunctionNames"),
    ("generation_config", "generationConfig"),
    ("safety_settings", "safetySettings"),
    ("cached_content", "cachedContent"),
    ("function_declarations", "functionDeclarations"),
    ("parameters_json_schema", "parametersJsonSchema"),
    ("response_json_schema", "responseJsonSchema"),
    ("function_call", "functionCall"),
    ("function_response", "functionResponse"),
    ("inline_data", "inlineData"),
    ("file_data", "fileData"),
    ("executable_code", "executableCode"),
    ("code_execution_result", "codeExecutionResult"),
    ("thought_signature", "thoughtSignature"),
    ("generate_content_request", "generateContentRequest"),
    ("google_search", "googleSearch"),
    ("code_execution", "codeExecution"),
    ("max_output_tokens", "maxOutputTokens"),
];

/// An object's protocol keys in camelCase (a key already in camelCase wins over its snake
/// twin).
fn camel_case(o: &mut Map<String, Value>) {
    for (snake, camel) in SNAKE {
        if let Some(v) = o.remove(*snake) {
            if !o.contains_key(*camel) {
                o.insert((*camel).to_string(), v);
            }
        }
    }
}

/// A body's protocol keys in camelCase: the body, its system instruction, tool config, each
/// content and part, each tool and declaration.
pub(super) fn normalise(body: &mut Map<String, Value>) {
    camel_case(body);
    // countTokens takes a whole generateContent request in `generateContentRequest`.
    if let Some(Value::Object(mut inner)) = body.remove("generateContentRequest") {
        camel_case(&mut inner);
        for (k, v) in inner {
            body.insert(k, v);
        }
    }
    if let Some(Value::Object(tc)) = body.get_mut("toolConfig") {
        camel_case(tc);
        if let Some(Value::Object(fc)) = tc.get_mut("functionCallingConfig") {
            camel_case(fc);
        }
    }
    // Google's parser takes one Content where a list is due, one Part where parts are, and a
    // bare string as the system instruction; they are read as the list and Content they stand
    // for.
    if let Some(c @ Value::Object(_)) = body.get_mut("contents") {
        *c = Value::Array(vec![std::mem::take(c)]);
    }
    // One Tool object in place of the list is taken as a list of one (recorded: a client sent
    // `tools` so, and Gemini answered it).
    if let Some(t @ Value::Object(_)) = body.get_mut("tools") {
        *t = Value::Array(vec![std::mem::take(t)]);
    }
    if let Some(Value::String(text)) = body.get("systemInstruction") {
        let si = json!({"parts": [{"text": text}]});
        body.insert("systemInstruction".into(), si);
    }
    let parts = |content: &mut Value| {
        if let Some(p @ Value::Object(_)) = content.get_mut("parts") {
            *p = Value::Array(vec![std::mem::take(p)]);
        }
        for part in content
            .get_mut("parts")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(p) = part.as_object_mut() {
                camel_case(p);
            }
        }
    };
    for content in body
        .get_mut("contents")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        parts(content);
    }
    if let Some(si) = body.get_mut("systemInstruction") {
        parts(si);
    }
    for tool in body
        .get_mut("tools")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let Some(t) = tool.as_object_mut() else {
            continue;
        };
        camel_case(t);
        for d in t
            .get_mut("functionDeclarations")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(d) = d.as_object_mut() {
                camel_case(d);
            }
        }
    }
}

/// The declarations of every `functionDeclarations` group, in order, as entries of their own;
/// a tool of another kind (`googleSearch`, `codeExecution`) stays one entry.
pub(super) fn flatten_tools(body: &mut Map<String, Value>) -> Result<(), String> {
    let Some(tools) = body.get_mut("tools") else {
        return Ok(());
    };
    let Value::Array(groups) = std::mem::take(tools) else {
        return Err("`tools` must be a list of Tool objects".into());
    };
    let mut out = Vec::new();
    for (i, g) in groups.into_iter().enumerate() {
        let Value::Object(mut g) = g else {
            return Err(format!("tools[{i}]: a Tool must be an object"));
        };
        match g.remove("functionDeclarations") {
            Some(Value::Array(decls)) => {
                if let Some(j) = decls
                    .iter()
                    .position(|d| !d.get("name").is_some_and(Value::is_string))
                {
                    return Err(format!(
                        "tools[{i}].functionDeclarations[{j}]: a FunctionDeclaration needs a `name` string"
                    ));
                }
                out.extend(decls);
                if !g.is_empty() {
                    out.push(Value::Object(g));
                }
            }
            Some(_) => {
                return Err(format!(
                    "tools[{i}].functionDeclarations: must be a list of FunctionDeclaration objects"
                ))
            }
            None => out.push(Value::Object(g)),
        }
    }
    body.insert("tools".into(), Value::Array(out));
    Ok(())
}
