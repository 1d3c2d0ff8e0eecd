"""Running commands for the agent: the approvals document, the policy, the sanitized
environment and the process runner behind ``system.run``."""
