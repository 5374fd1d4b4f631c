"""What people see: text and tables, the pager, terminal charts, the HTML report and its SVG."""
