//! Preparing a run directory: the config snapshot, the initial network, role locks, and
//! what a resumed run must agree with.

use super::*;

/// Prepares the run directory: a fresh run writes the config snapshot and the initial
/// network `accepted/step-00000000`; a resumed run checks the snapshot exists. Stale
/// temporaries of a killed process are removed. Returns the locks of the one-per-run
/// roles this process plays (learner, gate), held until they drop.
pub fn prepare(
    run: &RunDir,
    config: &RunConfig,
    resume: bool,
    roles: Roles,
) -> Result<Vec<RoleLock>> {
    let snapshot = run.config_file();
    if snapshot.exists() && !resume {
        bail!(
            "{} already holds a run; continue it with --resume, or choose another run.dir",
            run.root().display()
        );
    }
    run.create()
        .with_context(|| format!("creating run directory {}", run.root().display()))?;
    let mut locks = Vec::new();
    for (plays, role) in [(roles.learn, "learner"), (roles.gate, "gate")] {
        if plays {
            locks.push(run.lock_role(role)?);
        }
    }
    if roles.is_all() {
        // Only a process that plays every role owns the directory: anyone else's
        // temporaries may be writes in progress on another machine.
        remove_stale_temporaries(run)?;
    }
    check_config_fits_run(run, config)?;
    // A fresh run's first network, made (or loaded from `run.init`, and checked) before
    // the snapshot is written: a refused `run.init` leaves no run behind.
    let initial = match run.best()? {
        None => {
            let device = parse_device(&config.run.device)?;
            tch_seed(config.run.seed);
            Some(initial_network(config, device)?)
        }
        Some(_) => None,
    };
    if roles.learn || !snapshot.exists() {
        shogi_rundir::write_atomic(&snapshot, config.to_toml().as_bytes())
            .with_context(|| format!("writing {}", snapshot.display()))?;
    }
    if let Some((_, best)) = run.best()?
        && roles.gate
    {
        // Heals a BEST left one promotion behind by a kill between rename and rewrite.
        let name = best.file_name().unwrap_or_default().to_string_lossy();
        run.write_best_pointer(&name)?;
    }
    if let Some((model, parent)) = initial {
        let layout = layout_of(config);
        let meta = CheckpointMeta {
            architecture: model.config().clone(),
            variant: layout.variant.to_string(),
            feature_version: layout.feature_version,
            features: config.network.features,
            policy_version: layout.policy_version,
            training_step: 0,
            samples_seen: 0,
            parent,
            play: Some(super::play_root(config)),
            // Written as the run begins: its clock's zero.
            run_seconds: Some(0.0),
        };
        shogi_model::publish_checkpoint(
            &run.accepted().join(checkpoint_name(0)),
            &model.vs,
            &meta,
            |_| Ok(()),
        )?;
        run.write_best_pointer(&checkpoint_name(0))?;
        info!("initial network written to accepted/{}", checkpoint_name(0));
    }
    Ok(locks)
}

/// The network a fresh run starts from: a random one, or `run.init`'s (a checkpoint, or
/// a run directory standing for its best network), which must be a network of the
/// config's game, input planes and architecture; a mismatch is refused by name before
/// anything is written. Returns it with the name its manifest records as the parent.
fn initial_network(
    config: &RunConfig,
    device: shogi_model::tch::Device,
) -> Result<(Model, Option<String>)> {
    let init = config.run.init.trim();
    if init.is_empty() {
        return Ok((Model::new(&model_config(config), device), None));
    }
    let dir = shogi_rundir::network_dir(Path::new(init))
        .with_context(|| format!("run.init = {init:?}: no network there"))?;
    let expected = Expected {
        architecture: Some(model_config(config)),
        ..Expected::for_layout(&layout_of(config))
    };
    let (model, manifest) = load_checkpoint(&dir, &expected, device).with_context(|| {
        format!(
            "run.init = {init:?}: {} is not a network this config can continue (the [game] and [network] sections must match the network's)",
            dir.display()
        )
    })?;
    info!(
        "run starts from {} ({}), not a random network",
        manifest.name,
        dir.display()
    );
    Ok((
        model,
        Some(format!("{} ({})", manifest.name, dir.display())),
    ))
}

/// Refuses a config whose networks would differ from the run's (input planes or
/// architecture), naming each difference and the key that sets it. Called before
/// anything is written, so a refused resume leaves the run as it was.
pub(super) fn check_config_fits_run(run: &RunDir, config: &RunConfig) -> Result<()> {
    let Ok((_, newest)) = learner_start(run) else {
        return Ok(()); // no network yet: a fresh run
    };
    let manifest = shogi_model::read_manifest(&newest)
        .with_context(|| format!("reading the manifest of {}", newest.display()))?;
    let layout = layout_of(config);
    if manifest.meta.features != layout.features {
        bail!(
            "the run's networks read the {} input planes but the config asks for {} \
             (network.features): a run keeps one feature set",
            manifest.meta.features,
            layout.features
        );
    }
    let arch = model_config(config);
    let differences = manifest.meta.architecture.diff(&arch);
    if !differences.is_empty() {
        // Each field as `name: the run's vs the config's`, with the key that sets it.
        let named: Vec<String> = differences
            .iter()
            .map(|d| match d.split(':').next().unwrap_or("") {
                "blocks" => format!("{d} (network.blocks)"),
                "channels" => format!("{d} (network.channels)"),
                "se" => format!("{d} (network.se)"),
                "material_head" => format!("{d} (learner.material_weight > 0)"),
                "opponent_policy" => format!("{d} (learner.opponent_policy_weight > 0)"),
                _ => d.clone(),
            })
            .collect();
        bail!(
            "the run's networks differ from what the config asks for: {} (the run's vs the \
             config's): a run keeps one architecture",
            named.join(", ")
        );
    }
    Ok(())
}

pub(super) fn tch_seed(seed: u64) {
    shogi_model::tch::manual_seed(seed as i64);
}

/// Temporaries ([`shogi_rundir::is_temporary_name`]) are only ever left by a killed
/// process; `train` owns its run directory, so it clears them on start.
pub(super) fn remove_stale_temporaries(run: &RunDir) -> Result<()> {
    for dir in [
        run.candidates(),
        run.accepted(),
        run.rejected(),
        run.replay(),
    ] {
        for path in shogi_rundir::remove_temporaries(&dir)
            .with_context(|| format!("clearing temporaries in {}", dir.display()))?
        {
            warn!("removed {} left by an interrupted process", path.display());
        }
    }
    Ok(())
}

/// The newest network the learner produced (candidates, accepted or rejected): a
/// resumed learner continues from it, losing only the steps since that export.
pub(super) fn learner_start(run: &RunDir) -> Result<(u64, PathBuf)> {
    run.networks_newest_first()?
        .into_iter()
        .next()
        .context("the run directory has no network at all (accepted/ is empty)")
}

/// The network the learner continues: its weights, its manifest, and the directory it
/// was read from (its optimiser state and replay account beside it).
pub(super) struct LearnerStart {
    pub(super) model: Model,
    pub(super) manifest: shogi_model::Manifest,
    pub(super) dir: PathBuf,
}

/// The network the learner continues, loaded when this process plays the learner
/// (`None` otherwise), with its step and directory: the newest network of the run that
/// loads. A newer one that does not (truncated, non-finite, another layout) is passed
/// over with a warning naming it and why; the gate sets such a candidate aside. Logs
/// which network the learner continues.
#[allow(clippy::type_complexity)]
pub(super) fn learner_network(
    run: &RunDir,
    layout: &NetLayout,
    roles: Roles,
    device: shogi_model::tch::Device,
) -> Result<(u64, Option<LearnerStart>)> {
    let (newest_step, _) = learner_start(run)?;
    if !roles.learn {
        info!(
            "run {} ({}): playing {} beside the run's learner (newest network: step {})",
            run.root().display(),
            layout.variant,
            roles.describe(),
            newest_step
        );
        return Ok((newest_step, None));
    }
    let expected = Expected::for_layout(layout).any_features();
    let found = newest_that_loads(run.networks_newest_first()?, |dir| {
        load_checkpoint(dir, &expected, device)
    })
    .map_err(|tried| anyhow!("no network of the run loads: {}", tried_list(&tried)))?;
    warn_passed_over("learner", &found.passed_over);
    let (model, manifest) = found.loaded;
    info!(
        "run {} ({}): learner {} {} at step {}",
        run.root().display(),
        layout.variant,
        if found.step == 0 {
            "starts from"
        } else {
            "resumes from"
        },
        manifest.name,
        found.step
    );
    let start = LearnerStart {
        model,
        manifest,
        dir: found.dir,
    };
    Ok((found.step, Some(start)))
}

/// Warns of each newer network `role` passed over because it does not load.
pub(super) fn warn_passed_over(role: &str, passed_over: &[(PathBuf, String)]) {
    for (dir, why) in passed_over {
        warn!(
            "{role}: {} does not load, an older network is used: {why}",
            dir.display()
        );
    }
}

/// `dir: why; dir: why` of the networks [`newest_that_loads`] tried.
pub(super) fn tried_list(tried: &[(PathBuf, String)]) -> String {
    tried
        .iter()
        .map(|(dir, why)| format!("{}: {why}", dir.display()))
        .collect::<Vec<_>>()
        .join("; ")
}
