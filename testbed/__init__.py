"""Test beds shared by the tests (tests/) and the benchmark suite (benches/), so that neither
imports the other: several hosts on one machine (`testbed.netns`), the workspace's Rust programs
built (`testbed.cargo`)."""
