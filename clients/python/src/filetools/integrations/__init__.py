"""The catalogue's tools in agent frameworks: thin shells over ``filetools.tools``.

Each module needs its framework, installed with the extra of the same name:

- ``filetools.integrations.langchain`` (``pip install filetools[langchain]``):
  LangChain tools and a toolkit.
- ``filetools.integrations.crewai`` (``filetools[crewai]``): crewAI tools and
  ``FiletoolsFileStore`` for crewAI's proposed pluggable file store.
- ``filetools.integrations.deepagents`` (``filetools[deepagents]``): a deep
  agents ``BackendProtocol`` backend.

The tools pass the dispatcher's text through unchanged: a model reads the same
words here as through MCP or the TypeScript and Go dispatchers.
"""
