# Sourced by the benchmarks that run the real Claude Code CLI: the pinned
# releases (src/claude/mod.rs), installed where the test suite installs
# them (tests/common/real_claude.rs: target/claude-code/<version>/claude,
# one executable per release, node 22 from the npm registry for the newest
# when the machine's node is older). Needs $repo and $target, and die().

# The pinned releases, oldest first: KNOWN_GOOD_VERSION NEWEST_TESTED_VERSION.
tested_versions() {
  local name v
  for name in KNOWN_GOOD_VERSION NEWEST_TESTED_VERSION; do
    v=$(sed -n "s/^pub const $name: &str = \"\\(.*\\)\";/\\1/p" "$repo/src/claude/mod.rs")
    [[ -n $v ]] || die "no $name in src/claude/mod.rs"
    printf '%s\n' "$v"
  done
}

# The wrapper of release $1, installed first if it is not: the install is
# the test suite's own (one test that runs on every pinned release), so a
# bench never installs differently from the tests.
claude_bin() {
  local version=$1 bin=$target/claude-code/$1/claude
  if ! "$bin" --version 2>/dev/null | grep -q "^$version "; then
    printf 'installing the pinned Claude Code releases under %s (the test suite does it: cargo test --test integration real_claude::a_401)\n' \
      "$target/claude-code" >&2
    (cd "$repo" && cargo test --locked --quiet --test integration real_claude::a_401_is_a_permanent_failure >&2) ||
      die "installing the pinned Claude Code releases failed (see above)"
    "$bin" --version 2>/dev/null | grep -q "^$version " || die "$bin is not Claude Code $version after the install"
  fi
  printf '%s\n' "$bin"
}
