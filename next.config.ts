import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite loads its data files from its package folder at run time; bundling it breaks that.
  serverExternalPackages: ["@electric-sql/pglite", "amqplib", "kafkajs"],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default nextConfig;
