// Placeholder so the module builds; replaced by the module's real sources.
