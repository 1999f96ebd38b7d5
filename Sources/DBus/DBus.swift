/// placeholder doc, replaced below
