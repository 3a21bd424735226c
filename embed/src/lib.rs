//! Text embeddings from a static embedding model in the model2vec format
//! (a directory with `tokenizer.json`, `model.safetensors` and
//! `config.json`), computed offline: the text's tokens (no special tokens,
//! the unknown token dropped, at most [`MAX_TOKENS`]) each have a vector; the
//! text's embedding is their mean, L2-normalised when the model says so.
//! This is what model2vec's `StaticModel.encode` computes, so the same model
//! gives the same vectors here as in Python. No database, no network.

use std::path::Path;
use tokenizers::Model;

pub mod codes;
pub mod lists;

/// Tokens of a text that count (model2vec's default `max_length`).
pub const MAX_TOKENS: usize = 512;

/// A loaded model.
pub struct StaticModel {
    name: String,
    tokenizer: tokenizers::Tokenizer,
    /// `model.safetensors`, mapped; its embeddings, little-endian f32,
    /// row-major (one row of `dims` per token id), start at `vectors_at`.
    weights: memmap2::Mmap,
    vectors_at: usize,
    dims: usize,
    unknown: Option<u32>,
    normalize: bool,
    /// Whether the tokenizer is BERT's (see [`StaticModel::ascii_tokens`]).
    bert: bool,
}

#[derive(serde::Deserialize)]
struct Config {
    #[serde(default = "yes")]
    normalize: bool,
}

fn yes() -> bool {
    true
}

impl StaticModel {
    /// Loads the model in `dir`; its name is the directory's.
    pub fn load(dir: &Path) -> Result<StaticModel, String> {
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or("the model directory has no name")?
            .to_string();
        let read = |file: &str| {
            std::fs::read(dir.join(file)).map_err(|e| format!("cannot read {file}: {e}"))
        };
        let config: Config = serde_json::from_slice(&read("config.json")?)
            .map_err(|e| format!("config.json: {e}"))?;
        let tokenizer = tokenizers::Tokenizer::from_bytes(read("tokenizer.json")?)
            .map_err(|e| format!("tokenizer.json: {e}"))?;
        let file = std::fs::File::open(dir.join("model.safetensors"))
            .map_err(|e| format!("cannot read model.safetensors: {e}"))?;
        // SAFETY: the mapping is only read. A model's files are replaced by
        // new files (scripts/install-model, packages), never rewritten in
        // place while servers run (docs/actions.md, "By meaning").
        let weights = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|e| format!("cannot read model.safetensors: {e}"))?;
        let tensors = safetensors::SafeTensors::deserialize(&weights)
            .map_err(|e| format!("model.safetensors: {e}"))?;
        let embeddings = tensors
            .tensor("embeddings")
            .map_err(|e| format!("model.safetensors: {e}"))?;
        let (rows, dims) = match embeddings.shape() {
            [rows, dims] if embeddings.dtype() == safetensors::Dtype::F32 => (*rows, *dims),
            shape => {
                return Err(format!(
                    "model.safetensors: embeddings must be F32 [tokens, dims], not {:?} {shape:?}",
                    embeddings.dtype()
                ))
            }
        };
        if rows < tokenizer.get_vocab_size(true) || dims == 0 {
            return Err("model.safetensors: fewer vectors than tokens".to_string());
        }
        let vectors_at = embeddings.data().as_ptr() as usize - weights.as_ptr() as usize;
        let unknown = tokenizer.token_to_id("[UNK]");
        let bert = is_bert(&tokenizer);
        Ok(StaticModel {
            name,
            bert,
            tokenizer,
            weights,
            vectors_at,
            dims,
            unknown,
            normalize: config.normalize,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The token ids of `text` that have vectors.
    pub fn tokens(&self, text: &str) -> Vec<u32> {
        let ids = match self.ascii_tokens(text) {
            Some(ids) => ids,
            None => match self.tokenizer.encode(text, false) {
                Ok(encoding) => encoding.get_ids().to_vec(),
                Err(_) => return vec![],
            },
        };
        ids.into_iter()
            .filter(|id| Some(*id) != self.unknown)
            .take(MAX_TOKENS)
            .collect()
    }

    /// The token ids the tokenizer makes of an ASCII text without `[` (no
    /// special token in it), when the tokenizer is BERT's: its normalizer
    /// and pre-tokenizer done here, byte by byte, and its WordPiece model
    /// on each word. The same ids as `encode` (a property test compares
    /// them), without the bookkeeping of offsets that took three quarters
    /// of its time (65 of 90 µs for an entity of eight fields); None for
    /// any other text, which `encode` tokenizes.
    fn ascii_tokens(&self, text: &str) -> Option<Vec<u32>> {
        if !self.bert || !text.is_ascii() || text.contains('[') {
            return None;
        }
        let model = self.tokenizer.get_model();
        let mut ids = Vec::new();
        let mut word = String::new();
        let mut end_word = |word: &mut String| -> Option<()> {
            if !word.is_empty() {
                ids.extend(model.tokenize(word).ok()?.into_iter().map(|t| t.id));
                word.clear();
            }
            Some(())
        };
        for b in text.bytes() {
            match b {
                // Whitespace separates words; other control characters are
                // dropped (BertNormalizer's clean_text).
                b' ' | b'\t' | b'\n' | b'\r' => end_word(&mut word)?,
                0..=0x1f | 0x7f => {}
                // Punctuation is a word of its own (BertPreTokenizer).
                _ if b.is_ascii_punctuation() => {
                    end_word(&mut word)?;
                    word.push(b as char);
                    end_word(&mut word)?;
                }
                _ => word.push(b.to_ascii_lowercase() as char),
            }
        }
        end_word(&mut word)?;
        Some(ids)
    }

    /// The embedding of `text`; None when no token of it is known.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let ids = self.tokens(text);
        if ids.is_empty() {
            return None;
        }
        let mut sum = vec![0f32; self.dims];
        let row_bytes = self.dims * 4;
        for id in &ids {
            let row = &self.weights[self.vectors_at + *id as usize * row_bytes..][..row_bytes];
            for (s, v) in sum.iter_mut().zip(row.chunks_exact(4)) {
                *s += f32::from_le_bytes([v[0], v[1], v[2], v[3]]);
            }
        }
        let n = ids.len() as f32;
        sum.iter_mut().for_each(|s| *s /= n);
        if self.normalize {
            normalize(&mut sum);
        }
        Some(sum)
    }
}

/// Whether `tokenizer` is BERT's uncased pipeline, which
/// [`StaticModel::ascii_tokens`] does for ASCII text: a BertNormalizer
/// that cleans and lowercases, the BertPreTokenizer, a WordPiece model, no
/// truncation, and special tokens that all have a `[`.
fn is_bert(tokenizer: &tokenizers::Tokenizer) -> bool {
    use tokenizers::{ModelWrapper, NormalizerWrapper, PreTokenizerWrapper};
    matches!(tokenizer.get_normalizer(),
             Some(NormalizerWrapper::BertNormalizer(n)) if n.clean_text && n.lowercase)
        && matches!(
            tokenizer.get_pre_tokenizer(),
            Some(PreTokenizerWrapper::BertPreTokenizer(_))
        )
        && matches!(tokenizer.get_model(), ModelWrapper::WordPiece(_))
        && tokenizer.get_truncation().is_none()
        && tokenizer
            .get_added_tokens_decoder()
            .values()
            .all(|t| t.content.contains('['))
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|s| s * s).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|s| *s /= norm);
    }
}

/// Cosine similarity of two vectors (0 when either is zero or their
/// lengths differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (*x as f64, *y as f64);
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model installed by scripts/setup (or NEOTOMA_EMBEDDING_MODEL).
    fn model() -> StaticModel {
        let dir = std::env::var("NEOTOMA_EMBEDDING_MODEL").unwrap_or_else(|_| {
            let out = std::process::Command::new("pg_config")
                .arg("--sharedir")
                .output()
                .ok()
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .unwrap_or_default();
            format!("{}/neotoma/models/potion-base-8M", out.trim())
        });
        StaticModel::load(Path::new(&dir))
            .unwrap_or_else(|e| panic!("{dir}: {e} (scripts/setup installs the model)"))
    }

    #[test]
    fn vectors_are_model2vecs() {
        let m = model();
        assert_eq!((m.name(), m.dims()), ("potion-base-8M", 256));
        // As model2vec's StaticModel("potion-base-8M").encode("Hello world").
        assert_eq!(m.tokens("Hello world"), [6598, 1094]);
        let v = m.embed("Hello world").unwrap();
        let expected = [-0.034325, -0.080203, -0.143964, 0.084801];
        for (got, want) in v.iter().zip(expected) {
            assert!((*got as f64 - want).abs() < 1e-5, "{got} vs {want}");
        }
        assert!((cosine(&v, &v) - 1.0).abs() < 1e-6);
        // Case and accents do not matter; unknown text has no embedding.
        assert_eq!(m.embed("HELLO WORLD"), Some(v));
        assert_eq!(m.embed(""), None);
        assert_eq!(m.embed("   "), None);
    }

    /// The ids `encode` makes of `text`, as `tokens` keeps them.
    fn encoded(m: &StaticModel, text: &str) -> Vec<u32> {
        let ids = m.tokenizer.encode(text, false).unwrap().get_ids().to_vec();
        ids.into_iter()
            .filter(|id| Some(*id) != m.unknown)
            .take(MAX_TOKENS)
            .collect()
    }

    #[test]
    fn ascii_tokens_are_the_tokenizers() {
        let m = model();
        assert!(m.bert);
        let text =
            "Invoice. Amount due: 118.5 EUR; date\t2024-01-15\r\nnumber:\u{1}W-79 (vendor's) \"x\"";
        assert!(m.ascii_tokens(text).is_some());
        assert_eq!(m.tokens(text), encoded(&m, text));
        // A word longer than WordPiece's 100 characters is unknown.
        let long = format!("{} b-{}", "a".repeat(101), "c".repeat(100));
        assert_eq!(m.tokens(&long), encoded(&m, &long));
        // Special tokens, non-ASCII: the tokenizer's own path.
        assert_eq!(m.ascii_tokens("[CLS] hi"), None);
        assert_eq!(m.ascii_tokens("café"), None);
        let config = proptest::test_runner::Config {
            cases: 3000,
            failure_persistence: None,
            ..Default::default()
        };
        // Words, numbers and any ASCII character between them.
        proptest::proptest!(config, |(text in r"([a-z]{1,8}|[A-Z][a-z]{0,6}|[0-9]{1,4}|[\x00-\x7f]){0,24}")| {
            proptest::prop_assert_eq!(m.tokens(&text), encoded(&m, &text));
        });
    }

    #[test]
    fn meanings_are_near() {
        let m = model();
        let e = |t: &str| m.embed(t).unwrap();
        let payment = e("payment");
        let near = cosine(&payment, &e("invoice amount due"));
        let far = cosine(&payment, &e("mountain hiking trail"));
        assert!(near > far + 0.1, "{near} vs {far}");
    }

    #[test]
    fn cosine_of_odd_vectors_is_zero() {
        assert_eq!(cosine(&[1.0, 0.0], &[1.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-12);
    }
}
