"""What kafkarep writes for people and tools: the step table, ITF trace files, the SVG trace
picture, the HTML report, JUnit XML, the JSON summary and the DOT state graph."""
