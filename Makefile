# The two commands of the README: `make demo` and `make test`.
# Both install any missing Debian package first (apt-get; sudo only when not root).

DEB_PACKAGES := cmake ninja-build g++ libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev \
                libtomlplusplus-dev nlohmann-json3-dev libfmt-dev python3-matplotlib \
                clang-format clang-tidy protobuf-compiler libprotobuf-dev python3-protobuf
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FABSIM := build/release/apps/fabsim/fabsim

FUZZ_SECONDS ?= 60

.PHONY: demo compare test deps build-release build-asan test-release test-asan bench tidy clean \
        build-fuzz fuzz

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build-release: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

build-asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS)

demo: build-release
	tools/demo.sh $(FABSIM) results/demo

# The full GSE vs RoCEv2 comparison (docs/VALIDATION.md; about 35 minutes on 2 cores).
compare: build-release
	tools/compare.sh $(FABSIM) results/compare

test-release: build-release
	ctest --preset release

test-asan: build-asan
	ctest --preset asan

test: test-release test-asan

# clang-tidy (bugprone, modernize, performance; .clang-tidy) over every folder's sources.
tidy: build-release
	run-clang-tidy -quiet -p build/release $$(git ls-files '*.cpp' | grep -v '^tests/') 2>/dev/null | \
	  grep -E 'warning:|error:' | sort | uniq -c | sort -rn | head -50

# libFuzzer on the scenario loader and the unit parser (docs/ROBUSTNESS.md): clang's libFuzzer
# with ASan and UBSan, each target for FUZZ_SECONDS; findings go to build/fuzz/fuzz/findings/.
build-fuzz: DEB_PACKAGES += clang libclang-rt-dev
build-fuzz: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j $(JOBS)

fuzz: build-fuzz
	tools/fuzz.sh build/fuzz $(FUZZ_SECONDS)

bench: build-release
	build/release/bench/fabsim_bench

clean:
	rm -rf build
