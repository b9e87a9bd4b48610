"""Sensor configuration: the typed spec, the layers it is read from (shipped, user,
project), one loaded rule, `where` conditions and `fields` projection, lint and its
words, the settings keys over sensor files and config.yaml, the JSON Schemas, and the
compiled rule index's builder."""
