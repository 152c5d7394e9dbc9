"""The errors a user's config or files can cause, raised before anything runs."""


class ConfigError(ValueError):
    """A user config that cannot be run: unknown key, wrong type, inconsistent settings."""
