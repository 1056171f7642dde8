//! Checkpoint round trip, tamper detection and mismatch refusal.

use shogi_model::tch::{Device, Kind, Tensor};
use shogi_model::{
    CheckpointError, CheckpointMeta, Expected, MANIFEST_FILE, Model, ModelConfig, WEIGHTS_FILE,
    load_checkpoint, read_manifest, save_checkpoint,
};

fn tiny() -> ModelConfig {
    ModelConfig::small(2, 8, 4, (5, 5), 3)
}

fn meta(cfg: &ModelConfig) -> CheckpointMeta {
    CheckpointMeta {
        architecture: cfg.clone(),
        variant: "minishogi".into(),
        feature_version: 3,
        features: Default::default(),
        policy_version: 2,
        training_step: 1234,
        samples_seen: 98765,
        parent: Some("step-000001000".into()),
        play: None,
        run_seconds: None,
    }
}

fn expected(cfg: &ModelConfig) -> Expected {
    Expected {
        architecture: Some(cfg.clone()),
        variant: "minishogi".into(),
        feature_version: 3,
        features: Some(Default::default()),
        policy_version: 2,
    }
}

/// A network's tensors by name, as a weights file holds them.
type Weights = Vec<(String, Tensor)>;

/// A fresh [`tiny`] network saved in a new directory.
fn saved_tiny() -> (ModelConfig, tempfile::TempDir) {
    let cfg = tiny();
    let model = Model::new(&cfg, Device::Cpu);
    let dir = tempfile::tempdir().unwrap();
    save_checkpoint(dir.path(), &model.vs, &meta(&cfg)).unwrap();
    (cfg, dir)
}

/// Gives BN running statistics non-trivial values so eval-mode outputs depend on them.
fn perturb_running_stats(m: &Model) {
    shogi_model::tch::no_grad(|| {
        for (name, mut t) in m.vs.variables() {
            if name.ends_with("running_mean") {
                t.copy_(&(Tensor::randn(t.size(), (Kind::Float, Device::Cpu)) * 0.1));
            } else if name.ends_with("running_var") {
                t.copy_(&(Tensor::rand(t.size(), (Kind::Float, Device::Cpu)) + 0.5));
            }
        }
    });
}

fn outputs(m: &Model, xs: &Tensor) -> (Vec<f32>, Vec<f32>) {
    shogi_model::tch::no_grad(|| {
        let (p, v) = m.forward_t(xs, false);
        (
            Vec::<f32>::try_from(&p.view([-1])).unwrap(),
            Vec::<f32>::try_from(&v.view([-1])).unwrap(),
        )
    })
}

#[test]
fn save_load_bit_identical() {
    shogi_model::tch::manual_seed(7);
    let cfg = tiny();
    let model = Model::new(&cfg, Device::Cpu);
    perturb_running_stats(&model);
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("step-000001234");
    let manifest = save_checkpoint(&ck, &model.vs, &meta(&cfg)).unwrap();
    assert_eq!(manifest.name, "step-000001234");
    assert_eq!(manifest.weights_sha256.len(), 64);
    assert!(ck.join(WEIGHTS_FILE).is_file());
    assert!(ck.join(MANIFEST_FILE).is_file());
    // No temp files left behind.
    let names: Vec<_> = std::fs::read_dir(&ck)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(read_manifest(&ck).unwrap(), manifest);

    let (loaded, m2) = load_checkpoint(&ck, &expected(&cfg), Device::Cpu).unwrap();
    assert_eq!(m2, manifest);
    assert_eq!(m2.meta.training_step, 1234);
    assert_eq!(m2.meta.parent.as_deref(), Some("step-000001000"));

    let xs = Tensor::randn([6, 4, 5, 5], (Kind::Float, Device::Cpu));
    let (p1, v1) = outputs(&model, &xs);
    let (p2, v2) = outputs(&loaded, &xs);
    assert_eq!(p1.len(), 6 * 75);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&p1), bits(&p2));
    assert_eq!(bits(&v1), bits(&v2));

    // Loading with architecture None accepts the manifest's.
    let mut any = expected(&cfg);
    any.architecture = None;
    load_checkpoint(&ck, &any, Device::Cpu).unwrap();

    // Saving again is deterministic.
    let again = save_checkpoint(dir.path().join("copy"), &loaded.vs, &meta(&cfg)).unwrap();
    assert_eq!(again.weights_sha256, manifest.weights_sha256);
}

#[test]
fn tampered_weights_fail_sha() {
    let (cfg, dir) = saved_tiny();
    let wpath = dir.path().join(WEIGHTS_FILE);
    let mut bytes = std::fs::read(&wpath).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0x40;
    std::fs::write(&wpath, bytes).unwrap();
    let err = load_checkpoint(dir.path(), &expected(&cfg), Device::Cpu).unwrap_err();
    assert!(
        matches!(err, CheckpointError::Sha256Mismatch { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("sha256 mismatch"), "{err}");
}

#[test]
fn mismatches_are_refused_by_name() {
    let (cfg, dir) = saved_tiny();

    // The loader refuses a checkpoint that differs from what `change` expects, naming why.
    let refused = |change: &dyn Fn(&mut Expected), why: &str| {
        let mut e = expected(&cfg);
        change(&mut e);
        let err = load_checkpoint(dir.path(), &e, Device::Cpu).unwrap_err();
        assert_eq!(err.to_string(), why);
    };
    refused(
        &|e| e.variant = "shogi".into(),
        "checkpoint variant is minishogi, expected shogi",
    );
    refused(
        &|e| e.feature_version = 4,
        "checkpoint feature version is 3, expected 4",
    );
    refused(
        &|e| e.policy_version = 1,
        "checkpoint policy version is 2, expected 1",
    );

    let mut e = expected(&cfg);
    let mut arch = cfg.clone();
    arch.blocks = 6;
    arch.channels = 64;
    e.architecture = Some(arch);
    let err = load_checkpoint(dir.path(), &e, Device::Cpu).unwrap_err();
    let s = err.to_string();
    assert!(s.contains("blocks: 2 vs 6"), "{s}");
    assert!(s.contains("channels: 8 vs 64"), "{s}");
}

#[test]
fn weights_of_another_architecture_are_refused() {
    // A manifest that lies about the architecture: tensor shapes disagree.
    let (cfg, dir) = saved_tiny();
    let mut manifest = read_manifest(dir.path()).unwrap();
    manifest.meta.architecture.channels = 16;
    std::fs::write(
        dir.path().join(MANIFEST_FILE),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
    let mut e = expected(&cfg);
    e.architecture = None;
    let err = load_checkpoint(dir.path(), &e, Device::Cpu).unwrap_err();
    assert!(
        matches!(err, CheckpointError::TensorMismatch { .. }),
        "{err}"
    );
}

/// Replaces the checkpoint's weights with `tensors` and makes the manifest's sha256 match,
/// so only the content checks can refuse them.
fn rewrite_weights(dir: &std::path::Path, tensors: &[(String, Tensor)]) {
    let wpath = dir.join(WEIGHTS_FILE);
    Tensor::write_safetensors(tensors, &wpath).unwrap();
    set_sha(dir);
}

fn set_sha(dir: &std::path::Path) {
    let bytes = std::fs::read(dir.join(WEIGHTS_FILE)).unwrap();
    let mut manifest = read_manifest(dir).unwrap();
    manifest.weights_sha256 = shogi_model::sha256_hex(&bytes);
    std::fs::write(
        dir.join(MANIFEST_FILE),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
}

fn edit_manifest(dir: &std::path::Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join(MANIFEST_FILE);
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut json);
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
}

#[test]
fn every_manifest_and_weights_error_path_is_refused() {
    let cfg = tiny();
    let model = Model::new(&cfg, Device::Cpu);
    let vars: Vec<(String, Tensor)> = {
        let mut v: Vec<_> = model.vs.variables().into_iter().collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    let fresh = || {
        let dir = tempfile::tempdir().unwrap();
        save_checkpoint(dir.path(), &model.vs, &meta(&cfg)).unwrap();
        dir
    };
    let any = Expected {
        architecture: None,
        ..expected(&cfg)
    };
    let load =
        |dir: &tempfile::TempDir| load_checkpoint(dir.path(), &any, Device::Cpu).unwrap_err();

    // Bad JSON.
    let d = fresh();
    std::fs::write(d.path().join(MANIFEST_FILE), b"{\"format_version\": 1,").unwrap();
    assert!(matches!(load(&d), CheckpointError::Manifest { .. }));

    // Unknown format version.
    let d = fresh();
    edit_manifest(d.path(), |j| j["format_version"] = 99.into());
    assert!(matches!(
        load(&d),
        CheckpointError::FormatVersion { found: 99, .. }
    ));

    // Sizes far beyond any network: refused from the manifest alone (allocating them
    // would abort the process).
    for (key, value) in [
        ("channels", 1u64 << 40),
        ("blocks", 1 << 20),
        ("value_hidden", 1 << 33),
    ] {
        let d = fresh();
        edit_manifest(d.path(), |j| j["architecture"][key] = value.into());
        let err = load(&d);
        assert!(
            matches!(err, CheckpointError::Manifest { .. }) && err.to_string().contains(key),
            "{key}: {err}"
        );
    }

    // The weights file rewritten after `edit`: the manifest's architecture is right, the
    // tensors are not.
    let with_weights = |edit: &dyn Fn(&mut Weights)| {
        let d = fresh();
        let mut edited: Weights = vars
            .iter()
            .map(|(n, t)| (n.clone(), t.shallow_clone()))
            .collect();
        edit(&mut edited);
        rewrite_weights(d.path(), &edited);
        load(&d)
    };
    let zeros = |n: i64| Tensor::zeros([n], (Kind::Float, Device::Cpu));

    // Missing tensor.
    let err = with_weights(&|w| w.retain(|(n, _)| n != "value.fc2.bias"));
    assert!(
        matches!(&err, CheckpointError::MissingTensor { name, .. } if name == "value.fc2.bias"),
        "{err}"
    );

    // Unexpected tensor.
    let err = with_weights(&|w| w.push(("extra.weight".into(), zeros(2))));
    assert!(
        matches!(&err, CheckpointError::UnexpectedTensor { name, .. } if name == "extra.weight"),
        "{err}"
    );

    // Wrong shape.
    let err = with_weights(&|w| {
        for (n, t) in w.iter_mut() {
            if n == "value.fc2.bias" {
                *t = zeros(4);
            }
        }
    });
    assert!(
        matches!(&err, CheckpointError::TensorMismatch { name, .. } if name == "value.fc2.bias"),
        "{err}"
    );

    // A weights_file with a path in it (the file exists there, so only the name check
    // can refuse it).
    for bad in [
        "../weights.safetensors",
        "sub/weights.safetensors",
        "sub\\weights.safetensors",
        "..",
        "",
        "/etc/passwd",
    ] {
        let d = fresh();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::copy(
            d.path().join(WEIGHTS_FILE),
            d.path().join("sub").join(WEIGHTS_FILE),
        )
        .unwrap();
        edit_manifest(d.path(), |j| j["weights_file"] = bad.into());
        let err = load(&d);
        assert!(
            err.to_string().contains("must be a plain file name"),
            "{bad:?}: {err}"
        );
    }

    // A corrupt file whose hash matches the manifest: not safetensors.
    let d = fresh();
    std::fs::write(
        d.path().join(WEIGHTS_FILE),
        b"\xff\xff\xff\xff\xff\xff\xff\x7fnot safetensors",
    )
    .unwrap();
    set_sha(d.path());
    let err = load(&d);
    assert!(matches!(err, CheckpointError::Safetensors { .. }), "{err}");

    // The untouched checkpoint still loads.
    let d = fresh();
    load_checkpoint(d.path(), &any, Device::Cpu).unwrap();
}

/// A network with a NaN or an infinity in any weight is never written, and a file that
/// holds one (whatever wrote it) is refused by the tensor's name.
#[test]
fn non_finite_weights_are_never_written_nor_loaded() {
    let cfg = tiny();
    let model = Model::new(&cfg, Device::Cpu);
    // A convolution's weights (shallow copies share the model's storage).
    let (name, mut victim) = model
        .vs
        .variables()
        .into_iter()
        .filter(|(n, _)| n.ends_with("weight"))
        .min_by(|a, b| a.0.cmp(&b.0))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    save_checkpoint(dir.path(), &model.vs, &meta(&cfg)).unwrap();
    shogi_model::tch::no_grad(|| {
        let _ = victim.fill_(f64::INFINITY);
    });
    let refused = tempfile::tempdir().unwrap();
    let err = save_checkpoint(refused.path().join("net"), &model.vs, &meta(&cfg)).unwrap_err();
    assert!(
        matches!(&err, CheckpointError::NonFinite { name: n } if *n == name),
        "{err}"
    );
    assert!(!refused.path().join("net").join(WEIGHTS_FILE).exists());

    // The same weights written behind the checks' back: the loader refuses them.
    let mut tensors: Vec<(String, Tensor)> = model.vs.variables().into_iter().collect();
    tensors.sort_by(|a, b| a.0.cmp(&b.0));
    for (n, t) in &mut tensors {
        if *n == name {
            *t = t.fill(f64::NAN);
        }
    }
    rewrite_weights(dir.path(), &tensors);
    let any = Expected {
        architecture: None,
        ..expected(&cfg)
    };
    let err = load_checkpoint(dir.path(), &any, Device::Cpu).unwrap_err();
    assert!(err.to_string().contains(&name), "{err}");
    assert!(matches!(err, CheckpointError::NonFinite { .. }), "{err}");
}
