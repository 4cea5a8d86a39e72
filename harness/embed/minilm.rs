//! The forward pass of all-MiniLM-L6-v2 (a 6-layer, 384-wide BERT encoder) and its sentence
//! pooling: the mean of the last layer over the tokens, scaled to unit length.
//!
//! Texts are packed: every linear layer runs over the tokens of many texts at once (a token's
//! linear layers do not depend on its neighbours), and only attention runs per text. The matrix
//! products are `matrixmultiply`'s, which picks AVX2 and FMA kernels at run time.

use super::safetensors::Tensors;
use crate::error::Result;

/// The model's width, heads, layers and position table, from its `config.json`.
pub const WIDTH: usize = 384;
const HEADS: usize = 12;
const HEAD: usize = WIDTH / HEADS;
const INNER: usize = 1536;
const LAYERS: usize = 6;
pub const VOCAB: usize = 30522;
pub const POSITIONS: usize = 512;
const EPS: f32 = 1e-12;

struct Linear {
    /// `out x in`, row-major, as the file holds it.
    w: Vec<f32>,
    b: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Linear {
    fn load(t: &Tensors, name: &str, outputs: usize, inputs: usize) -> Result<Linear> {
        Ok(Linear {
            w: t.f32(&format!("{name}.weight"), &[outputs, inputs])?,
            b: t.f32(&format!("{name}.bias"), &[outputs])?,
            inputs,
            outputs,
        })
    }

    /// `x` is `rows x inputs`; the result is `rows x outputs`.
    fn apply(&self, x: &[f32], rows: usize) -> Vec<f32> {
        assert_eq!(x.len(), rows * self.inputs, "a linear layer's input shape");
        let mut y = Vec::with_capacity(rows * self.outputs);
        for _ in 0..rows {
            y.extend_from_slice(&self.b);
        }
        // SAFETY: the strides describe `x` (rows x inputs), the transposed weights
        // (inputs x outputs, read from the outputs x inputs matrix) and `y` (rows x outputs),
        // each inside its slice.
        unsafe {
            matrixmultiply::sgemm(
                rows,
                self.inputs,
                self.outputs,
                1.0,
                x.as_ptr(),
                self.inputs as isize,
                1,
                self.w.as_ptr(),
                1,
                self.inputs as isize,
                1.0,
                y.as_mut_ptr(),
                self.outputs as isize,
                1,
            );
        }
        y
    }
}

struct Norm {
    g: Vec<f32>,
    b: Vec<f32>,
}

impl Norm {
    fn load(t: &Tensors, name: &str) -> Result<Norm> {
        Ok(Norm {
            g: t.f32(&format!("{name}.weight"), &[WIDTH])?,
            b: t.f32(&format!("{name}.bias"), &[WIDTH])?,
        })
    }

    fn apply(&self, x: &mut [f32]) {
        for row in x.chunks_exact_mut(WIDTH) {
            let mean = row.iter().sum::<f32>() / WIDTH as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / WIDTH as f32;
            let inv = 1.0 / (var + EPS).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.g).zip(&self.b) {
                *v = (*v - mean) * inv * g + b;
            }
        }
    }
}

struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    out: Linear,
    norm1: Norm,
    up: Linear,
    down: Linear,
    norm2: Norm,
}

pub struct MiniLm {
    words: Vec<f32>,
    positions: Vec<f32>,
    kind: Vec<f32>,
    norm: Norm,
    layers: Vec<Layer>,
}

impl MiniLm {
    pub fn load(t: &Tensors) -> Result<MiniLm> {
        let mut layers = Vec::with_capacity(LAYERS);
        for i in 0..LAYERS {
            let p = format!("encoder.layer.{i}");
            layers.push(Layer {
                q: Linear::load(t, &format!("{p}.attention.self.query"), WIDTH, WIDTH)?,
                k: Linear::load(t, &format!("{p}.attention.self.key"), WIDTH, WIDTH)?,
                v: Linear::load(t, &format!("{p}.attention.self.value"), WIDTH, WIDTH)?,
                out: Linear::load(t, &format!("{p}.attention.output.dense"), WIDTH, WIDTH)?,
                norm1: Norm::load(t, &format!("{p}.attention.output.LayerNorm"))?,
                up: Linear::load(t, &format!("{p}.intermediate.dense"), INNER, WIDTH)?,
                down: Linear::load(t, &format!("{p}.output.dense"), WIDTH, INNER)?,
                norm2: Norm::load(t, &format!("{p}.output.LayerNorm"))?,
            });
        }
        Ok(MiniLm {
            words: t.f32("embeddings.word_embeddings.weight", &[VOCAB, WIDTH])?,
            positions: t.f32("embeddings.position_embeddings.weight", &[POSITIONS, WIDTH])?,
            kind: t.f32("embeddings.token_type_embeddings.weight", &[2, WIDTH])?,
            norm: Norm::load(t, "embeddings.LayerNorm")?,
            layers,
        })
    }

    /// One unit-length sentence vector per text of token ids (each at most [`POSITIONS`] long,
    /// ids below the vocabulary's size: the tokenizer's output).
    pub fn embed(&self, texts: &[Vec<u32>]) -> Vec<Vec<f32>> {
        assert!(
            texts.iter().all(|t| !t.is_empty()
                && t.len() <= POSITIONS
                && t.iter().all(|&i| (i as usize) < VOCAB)),
            "token ids must come from the tokenizer"
        );
        let rows: usize = texts.iter().map(Vec::len).sum();
        let mut x = Vec::with_capacity(rows * WIDTH);
        for ids in texts {
            for (pos, &id) in ids.iter().enumerate() {
                let w = &self.words[id as usize * WIDTH..][..WIDTH];
                let p = &self.positions[pos * WIDTH..][..WIDTH];
                x.extend(
                    w.iter()
                        .zip(p)
                        .zip(&self.kind[..WIDTH])
                        .map(|((a, b), c)| a + b + c),
                );
            }
        }
        self.norm.apply(&mut x);
        let spans: Vec<(usize, usize)> = texts
            .iter()
            .scan(0, |at, t| {
                let s = (*at, t.len());
                *at += t.len();
                Some(s)
            })
            .collect();
        for layer in &self.layers {
            let q = layer.q.apply(&x, rows);
            let k = layer.k.apply(&x, rows);
            let v = layer.v.apply(&x, rows);
            let mut ctx = vec![0f32; rows * WIDTH];
            for &(start, len) in &spans {
                attend(&q, &k, &v, &mut ctx, start, len);
            }
            let a = layer.out.apply(&ctx, rows);
            x.iter_mut().zip(&a).for_each(|(x, a)| *x += a);
            layer.norm1.apply(&mut x);
            let mut h = layer.up.apply(&x, rows);
            h.iter_mut().for_each(|v| *v = gelu(*v));
            let d = layer.down.apply(&h, rows);
            x.iter_mut().zip(&d).for_each(|(x, d)| *x += d);
            layer.norm2.apply(&mut x);
        }
        spans
            .iter()
            .map(|&(start, len)| {
                let mut mean = vec![0f32; WIDTH];
                for row in x[start * WIDTH..(start + len) * WIDTH].chunks_exact(WIDTH) {
                    mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
                }
                let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
                mean.iter_mut().for_each(|m| *m /= norm);
                mean
            })
            .collect()
    }
}

/// Self-attention of one text's `len` tokens from row `start`, every head, into `ctx`.
fn attend(q: &[f32], k: &[f32], v: &[f32], ctx: &mut [f32], start: usize, len: usize) {
    let scale = 1.0 / (HEAD as f32).sqrt();
    let mut scores = vec![0f32; len * len];
    let at = start * WIDTH;
    for h in 0..HEADS {
        let off = at + h * HEAD;
        // SAFETY: the query and key views are `len x HEAD` inside rows `start..start+len` of the
        // `rows x WIDTH` matrices; `scores` is `len x len`.
        unsafe {
            matrixmultiply::sgemm(
                len,
                HEAD,
                len,
                scale,
                q[off..].as_ptr(),
                WIDTH as isize,
                1,
                k[off..].as_ptr(),
                1,
                WIDTH as isize,
                0.0,
                scores.as_mut_ptr(),
                len as isize,
                1,
            );
        }
        for row in scores.chunks_exact_mut(len) {
            let max = row.iter().fold(f32::NEG_INFINITY, |m, &s| m.max(s));
            let mut sum = 0.0;
            for s in row.iter_mut() {
                *s = (*s - max).exp();
                sum += *s;
            }
            row.iter_mut().for_each(|s| *s /= sum);
        }
        // SAFETY: `scores` is `len x len`; the value and context views are `len x HEAD` inside
        // the same rows of `rows x WIDTH` matrices.
        unsafe {
            matrixmultiply::sgemm(
                len,
                len,
                HEAD,
                1.0,
                scores.as_ptr(),
                len as isize,
                1,
                v[off..].as_ptr(),
                WIDTH as isize,
                1,
                0.0,
                ctx[off..].as_mut_ptr(),
                WIDTH as isize,
                1,
            );
        }
    }
}

/// BERT's exact GELU: `x * Phi(x)`.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2))
}
