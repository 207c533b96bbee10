//! Control flow (ABI 1.6): graphs with subgraphs run by `cond`, `while_loop` and `call`,
//! compiled on the CPU and executed, and a call that does not fit its subgraph refused.
use max_c::*;

const SCALAR: [i64; 0] = [];

fn run(g: &Graph, weights: &[(&str, &Tensor)], inputs: &[&Tensor]) -> Vec<Tensor> {
    let compiled = Context::new(1).unwrap().compile(g, &CompileOptions::default()).unwrap();
    compiled.init(weights).unwrap().execute(inputs).unwrap()
}

/// A subgraph of one float32 [2] input `v` giving f(v).
fn unary(name: &str, f: for<'a> fn(&Value<'a>) -> Result<Value<'a>>) -> Graph {
    let g = Graph::new(name).unwrap();
    {
        let v = g.add_input("v", DType::Float32, [2]).unwrap();
        g.set_outputs(&[&f(&v).unwrap()]).unwrap();
    }
    g
}

#[test]
fn cond_runs_the_branch_the_predicate_picks() {
    let g = Graph::new("select").unwrap();
    {
        let p = g.add_input("p", DType::Bool, SCALAR).unwrap();
        let x = g.add_input("x", DType::Float32, [2]).unwrap();
        let then_graph = unary("double", |v| v.add(v));
        let else_graph = unary("negate", |v| v.negate());
        let out = g.cond(&p, &[&x], &then_graph, &else_graph).unwrap();
        assert_eq!(out.len(), 1);
        g.set_outputs(&[&out[0]]).unwrap();
    }
    let x = Tensor::from_slice(&[1.5f32, -2.0], &[2]).unwrap();
    for (pred, want) in [(true, [3.0f32, -4.0]), (false, [-1.5, 2.0])] {
        let p = Tensor::from_bytes(DType::Bool, &[], &[u8::from(pred)]).unwrap();
        let out = run(&g, &[], &[&p, &x]);
        assert_eq!(out[0].to_vec::<f32>().unwrap(), want, "pred {pred}");
    }
}

fn i64_scalar<'g>(g: &'g Graph, name: &str) -> Value<'g> {
    g.add_input(name, DType::Int64, SCALAR).unwrap()
}

/// n! by a loop over (i, acc, n): n rides along as a loop value the body gives back.
fn factorial_graph() -> Graph {
    let predicate = Graph::new("i_le_n").unwrap();
    {
        let (i, _acc, n) = (i64_scalar(&predicate, "i"), i64_scalar(&predicate, "acc"), i64_scalar(&predicate, "n"));
        predicate.set_outputs(&[&i.less_equal(&n).unwrap()]).unwrap();
    }
    let body = Graph::new("step").unwrap();
    {
        let (i, acc, n) = (i64_scalar(&body, "i"), i64_scalar(&body, "acc"), i64_scalar(&body, "n"));
        let next = i.add(&body.scalar(1i64).unwrap()).unwrap();
        body.set_outputs(&[&next, &acc.mul(&i).unwrap(), &n]).unwrap();
    }
    let g = Graph::new("factorial").unwrap();
    {
        let n = i64_scalar(&g, "n");
        let one = g.scalar(1i64).unwrap();
        let out = g.while_loop(&[&one, &one, &n], &predicate, &body).unwrap();
        assert_eq!(out.len(), 3);
        g.set_outputs(&[&out[1]]).unwrap();
    }
    g
}

#[test]
fn while_loop_computes_a_factorial() {
    let g = factorial_graph();
    for (n, want) in [(0i64, 1i64), (1, 1), (5, 120), (10, 3_628_800)] {
        let out = run(&g, &[], &[&Tensor::from_slice(&[n], &[]).unwrap()]);
        assert_eq!(out[0].to_vec::<i64>().unwrap(), [want], "{n}!");
    }
}

#[test]
fn call_inlines_a_subgraph_with_prefixed_weights() {
    // One layer, relu(v @ w), called twice: its weight is "l0.w" in the first call and
    // "l1.w" in the second.
    let layer = Graph::new("layer").unwrap();
    {
        let v = layer.add_input("v", DType::Float32, [Dim::from("batch"), Dim::from(2)]).unwrap();
        let w = layer.add_weight("w", DType::Float32, [2, 2]).unwrap();
        layer.set_outputs(&[&v.matmul(&w).unwrap().relu().unwrap()]).unwrap();
    }
    let g = Graph::new("two_layers").unwrap();
    {
        let x = g.add_input("x", DType::Float32, [Dim::from("batch"), Dim::from(2)]).unwrap();
        let h = g.call(&layer, &[&x], "l0.").unwrap();
        let y = g.call(&layer, &[&h[0]], "l1.").unwrap();
        g.set_outputs(&[&y[0]]).unwrap();
    }
    let w0 = Tensor::from_slice(&[1.0f32, -1.0, 2.0, 0.5], &[2, 2]).unwrap();
    let w1 = Tensor::from_slice(&[0.5f32, 1.0, -1.0, 3.0], &[2, 2]).unwrap();
    let x = Tensor::from_slice(&[1.0f32, 2.0, -3.0, 1.0], &[2, 2]).unwrap();
    let out = run(&g, &[("l0.w", &w0), ("l1.w", &w1)], &[&x]);
    // relu(x @ w0) = [[5, 0], [0, 3.5]]; relu(that @ w1) = [[2.5, 5], [0, 10.5]].
    assert_eq!(out[0].to_vec::<f32>().unwrap(), [2.5, 5.0, 0.0, 10.5]);
}

#[test]
fn a_call_that_does_not_fit_its_subgraph_is_refused() {
    let g = Graph::new("misfit").unwrap();
    let x = g.add_input("x", DType::Float32, [3]).unwrap();
    let pairs = unary("pairs", |v| v.negate()); // takes a float32 [2], not [3]
    let e = g.call(&pairs, &[&x], "").unwrap_err();
    assert_eq!(e.code_name(), "INVALID_ARGUMENT");
    assert!(e.message.contains("pairs"), "{e}");
    assert_eq!(g.num_ops().unwrap(), 0);
    // The arity of cond's operands is the registry's "zero or more".
    let schema = op_schema("cond", 0).unwrap();
    assert_eq!(schema.inputs[1], OpInput { name: "args".into(), arity: InputArity::Any });
}

/// i = 0; while i < n: i += 1 — with n = 2^52, the endless ONNX Loop the fuzzer found.
fn counting_graph() -> Graph {
    let predicate = Graph::new("i_lt_n").unwrap();
    {
        let (i, n) = (i64_scalar(&predicate, "i"), i64_scalar(&predicate, "n"));
        predicate.set_outputs(&[&i.less(&n).unwrap()]).unwrap();
    }
    let body = Graph::new("step").unwrap();
    {
        let (i, n) = (i64_scalar(&body, "i"), i64_scalar(&body, "n"));
        body.set_outputs(&[&i.add(&body.scalar(1i64).unwrap()).unwrap(), &n]).unwrap();
    }
    let g = Graph::new("count").unwrap();
    {
        let n = i64_scalar(&g, "n");
        let zero = g.scalar(0i64).unwrap();
        let out = g.while_loop(&[&zero, &n], &predicate, &body).unwrap();
        g.set_outputs(&[&out[0]]).unwrap();
    }
    g
}

#[test]
fn run_options_stop_an_endless_loop_and_the_model_runs_on() {
    let compiled = Context::new(1).unwrap().compile(&counting_graph(), &CompileOptions::default()).unwrap();
    let model = compiled.init(&[]).unwrap();
    let endless = Tensor::from_slice(&[1i64 << 52], &[]).unwrap();
    let started = std::time::Instant::now();
    let options = RunOptions::new().timeout(Some(std::time::Duration::from_millis(50)));
    let e = model.execute_with_options(&[&endless], &options).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_DEADLINE_EXCEEDED, "{e}");
    assert!(e.message.contains("op 'while_loop' (iteration "), "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));

    let options = RunOptions::new();
    let canceller = {
        let options = options.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            options.cancel();
        })
    };
    let e = model.execute_with_options(&[&endless], &options).unwrap_err();
    canceller.join().unwrap();
    assert_eq!(e.code, ffi::MAX_STATUS_CANCELLED, "{e}");
    options.reset();
    let three = Tensor::from_slice(&[3i64], &[]).unwrap();
    let out = model.execute_with_options(&[&three], &options).unwrap();
    assert_eq!(out[0].to_vec::<i64>().unwrap(), [3]);
}
