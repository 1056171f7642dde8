# The two commands a fresh clone needs (see README.md). Both bootstrap the .venv first.
.PHONY: test bootstrap lint bench

test:
	bash scripts/test.sh

bootstrap:
	bash scripts/bootstrap.sh

# fmt + clippy over every target, warnings as errors.
lint: bootstrap
	. scripts/env.sh && cargo fmt --all -- --check && cargo clippy --workspace --all-targets -- -D warnings

bench: bootstrap
	. scripts/env.sh && cargo bench --workspace
