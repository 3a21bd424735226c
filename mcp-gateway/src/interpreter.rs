//! The external model interpreter: for files the extension's built-in
//! readers cannot read (PDFs, images, …), the extension leaves the run
//! pending and describes the work; this asks an OpenAI-compatible
//! chat-completions endpoint to read the file into entities, and the result is
//! recorded by one SQL call (`neotoma.record_interpretation`).
//!
//! PDF text is extracted here first; images go to the model as data URLs;
//! anything else is sent as text.

use base64::Engine;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct ModelOptions {
    /// Base URL of the API, e.g. https://api.openai.com/v1 (the request goes
    /// to `{base}/chat/completions`).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
}

#[derive(Clone)]
pub struct ModelInterpreter {
    opts: ModelOptions,
    http: reqwest::Client,
}

/// Longest document text sent to the model.
const MAX_TEXT_CHARS: usize = 200_000;

/// What the model read, and facts about the call kept with the run.
pub struct Reading {
    pub entities: Vec<Value>,
    pub details: Value,
}

fn system_prompt(types: &Value) -> String {
    format!(
        "You extract structured entities from documents for a memory system. Answer with one JSON \
         object {{\"entities\": [...]}} and nothing else. Each entity is a JSON object with an \
         \"entity_type\" chosen from the types below and the fields you find, named as listed \
         (dates as YYYY-MM-DD, numbers as numbers). Include every fact you find, even fields not \
         listed. Types: {types}"
    )
}

/// The text of a document for the model, or the image parts.
fn user_content(mime: &str, bytes: &[u8], filename: Option<&str>) -> Result<Value, String> {
    let name = filename.unwrap_or("document");
    if mime.starts_with("image/") {
        let url = format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        );
        return Ok(json!([
            {"type": "text", "text": format!("Extract the entities of this image ({name}).")},
            {"type": "image_url", "image_url": {"url": url}}
        ]));
    }
    let text = if mime == "application/pdf" {
        pdf_extract::extract_text_from_mem(bytes)
            .map_err(|e| format!("could not extract the PDF's text: {e}"))?
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    };
    let text: String = text.chars().take(MAX_TEXT_CHARS).collect();
    if text.trim().is_empty() {
        return Err(format!("{name} ({mime}) has no text to read"));
    }
    Ok(json!(format!("Document {name} ({mime}):\n\n{text}")))
}

/// The entities in a completion's content: a JSON object with `entities`, a
/// JSON array, or either inside a ``` fence.
pub fn parse_entities(content: &str) -> Result<Vec<Value>, String> {
    let trimmed = content.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|s| s.strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    match serde_json::from_str::<Value>(unfenced) {
        Ok(Value::Object(mut o)) => match o.remove("entities") {
            Some(Value::Array(a)) => Ok(a),
            _ => Ok(vec![Value::Object(o)]),
        },
        Ok(Value::Array(a)) => Ok(a),
        Ok(_) => Err("the model's answer is not an object or array of entities".into()),
        Err(e) => Err(format!("the model's answer is not JSON: {e}")),
    }
}

impl ModelInterpreter {
    pub fn new(opts: ModelOptions) -> anyhow::Result<ModelInterpreter> {
        let http = reqwest::Client::builder().timeout(opts.timeout).build()?;
        Ok(ModelInterpreter { opts, http })
    }

    /// Reads the file (`bytes`) a pending run describes
    /// (`external_interpretation`: MIME type, name, config, entity types).
    pub async fn read(&self, work: &Value, bytes: &[u8]) -> Result<Reading, String> {
        let started = Instant::now();
        let mime = work["mime_type"]
            .as_str()
            .unwrap_or("application/octet-stream");
        let config = &work["config"];
        let model = config["model_id"]
            .as_str()
            .unwrap_or(&self.opts.model)
            .to_string();
        let temperature = config["temperature"].as_f64().unwrap_or(0.0);
        let body = json!({
            "model": model,
            "temperature": temperature,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": system_prompt(&work["entity_types"])},
                {"role": "user", "content": user_content(mime, bytes, work["original_filename"].as_str())?},
            ],
        });
        let url = format!(
            "{}/chat/completions",
            self.opts.base_url.trim_end_matches('/')
        );
        let mut request = self.http.post(&url).json(&body);
        if let Some(key) = &self.opts.api_key {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("the model endpoint is unreachable: {e}"))?;
        let status = response.status();
        let answer: Value = response
            .json()
            .await
            .map_err(|e| format!("the model endpoint answered no JSON: {e}"))?;
        if !status.is_success() {
            return Err(format!(
                "the model endpoint answered {status}: {}",
                answer["error"]["message"].as_str().unwrap_or("")
            ));
        }
        let content = answer["choices"][0]["message"]["content"]
            .as_str()
            .ok_or("the completion has no content")?;
        let entities = parse_entities(content)?;
        Ok(Reading {
            entities,
            details: json!({
                "model": model, "endpoint": url, "elapsed_ms": started.elapsed().as_millis() as u64,
                "usage": answer["usage"], "completion_id": answer["id"],
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_entities_in_the_usual_shapes() {
        assert_eq!(
            parse_entities(r#"{"entities": [{"entity_type": "note"}]}"#)
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            parse_entities("```json\n[{\"a\": 1}, {\"b\": 2}]\n```")
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            parse_entities(r#"{"entity_type": "invoice"}"#).unwrap()[0]["entity_type"],
            "invoice"
        );
        assert!(parse_entities("Sorry, I can't").is_err());
        assert!(parse_entities("42").is_err());
    }

    #[test]
    fn text_and_images_become_messages() {
        let text = user_content("text/html", b"<p>Hi</p>", Some("a.html")).unwrap();
        assert!(text.as_str().unwrap().contains("<p>Hi</p>"));
        let image = user_content("image/png", &[1, 2, 3], None).unwrap();
        assert_eq!(image[1]["image_url"]["url"], "data:image/png;base64,AQID");
        assert!(user_content("application/pdf", b"not a pdf", None).is_err());
        assert!(user_content("text/plain", b"   ", None).is_err());
    }
}
