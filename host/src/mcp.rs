//! The MCP server (rmcp): tools, resources, prompts and the Skills extension.
