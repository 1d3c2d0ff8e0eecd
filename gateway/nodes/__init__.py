"""Node handling in the bundled gateway: command policy, pairing surfaces and invocations."""
