"""One renderer per agent: the abstract events of a session as that agent writes them."""
