# The two commands a fresh clone needs (see README.md). Both bootstrap the .venv first.
.PHONY: train test bootstrap lint bench
# scripts/env.sh is bash (it finds the repo through BASH_SOURCE); make's /bin/sh is not.
SHELL := /bin/bash

# The main job: the default training run (configs/minishogi.toml, ~30 min on 2 cores).
# CONFIG=configs/shogi-cpu.toml picks another; running it again resumes the run.
CONFIG ?= configs/minishogi.toml
train:
	bash scripts/train.sh $(CONFIG)


test:
	bash scripts/test.sh

bootstrap:
	bash scripts/bootstrap.sh

# fmt + clippy over every target, warnings as errors (also run by `make test`).
lint:
	bash scripts/lint.sh

bench: bootstrap
	. scripts/env.sh && cargo bench --workspace
