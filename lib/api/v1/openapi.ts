import { z } from "zod";
import { defineOperation } from "../registry";

export const openApiOperation = defineOperation({
  method: "get",
  tag: "Document",
  path: "/openapi.json",
  operationId: "openApiDocument",
  summary: "This document",
  public: true,
  response: z.object({ openapi: z.string() }).loose().meta({ id: "OpenApiDocument" }),
});
