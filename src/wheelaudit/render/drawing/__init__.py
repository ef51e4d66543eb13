"""Drawing helpers of the renderers, not formats of their own (``render/*.py`` are the
``--format`` names): :mod:`.layout` lays out the HTML report's graph and treemap, :mod:`.dot`
writes ``inspect --format dot``'s Graphviz graph."""
