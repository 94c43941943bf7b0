"""The interface document modelled: its constants, the OpenAPI document, the clause registry."""
