//! Build a two-layer MLP graph, compile it, bind its weights and run it from several threads.
//!
//! ```sh
//! cd bindings/rust && PKG_CONFIG_PATH=$PWD/../../build cargo run --example mlp
//! ```
use max_c::*;
use std::sync::Arc;

/// logits = relu(x @ w1 + b1) @ w2 with a symbolic batch.
fn build_graph() -> Result<Graph> {
    let g = Graph::new("mlp")?;
    {
        let x = g.add_input("x", DType::Float32, [Dim::from("batch"), Dim::from(4)])?;
        let w1 = g.add_weight("w1", DType::Float32, [4, 16])?;
        let b1 = g.add_weight("b1", DType::Float32, [16])?;
        let w2 = g.add_weight("w2", DType::Float32, [16, 3])?;
        let none = Attrs::new();
        let h = g.add_op("matmul", &[&x, &w1], &none)?;
        let h = g.add_op("add", &[&h[0], &b1], &none)?;
        let h = g.add_op("relu", &[&h[0]], &none)?;
        let y = g.add_op("matmul", &[&h[0], &w2], &none)?;
        g.set_named_outputs(&[("logits", &y[0])])?;
    }
    Ok(g)
}

/// A tensor of `shape` filled with a simple deterministic pattern.
fn pattern(shape: &[i64], scale: f32) -> Result<Tensor> {
    let n = shape.iter().product::<i64>() as usize;
    let data: Vec<f32> = (0..n).map(|i| ((i * 7 % 11) as f32 - 5.0) * scale).collect();
    Tensor::from_slice(&data, shape)
}

fn main() -> Result<()> {
    println!("libmax_c {}", version_string());
    let ctx = Context::new(0)?;
    let compiled = ctx.compile(&build_graph()?, &CompileOptions::default())?;
    for spec in compiled.inputs()?.iter().chain(&compiled.outputs()?) {
        println!("  {spec}  (shape {:?})", spec.shape());
    }
    for spec in compiled.weights()? {
        println!("  weight {spec}");
    }

    let (w1, b1, w2) = (pattern(&[4, 16], 0.1)?, pattern(&[16], 0.01)?, pattern(&[16, 3], 0.05)?);
    let model = Arc::new(compiled.init(&[("w1", &w1), ("b1", &b1), ("w2", &w2)])?);

    // One model serves any batch size, from many threads at once.
    let workers: Vec<_> = [1i64, 7, 64]
        .into_iter()
        .map(|batch| {
            let model = Arc::clone(&model);
            std::thread::spawn(move || -> Result<(i64, Vec<f32>)> {
                let x = pattern(&[batch, 4], 0.5)?;
                let out = model.execute(&[&x])?;
                Ok((batch, out[0].to_vec::<f32>()?))
            })
        })
        .collect();
    for w in workers {
        let (batch, logits) = w.join().expect("worker panicked")?;
        // The line every binding's example prints alike (C: "batch %2d: first row %.6f %.6f %.6f").
        println!("batch {:>2}: first row {:.6} {:.6} {:.6}", batch, logits[0], logits[1], logits[2]);
    }

    // A bad input is an error naming the input; the model stays usable.
    let bad = pattern(&[2, 5], 1.0)?;
    match model.execute(&[&bad]) {
        Err(e) => println!("as expected: {e}"),
        Ok(_) => unreachable!("a [2, 5] input cannot match [batch, 4]"),
    }
    Ok(())
}
