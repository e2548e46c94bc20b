// Topic configuration as the cards state it: a topic's override, else the cluster's value.

export function minIsr(store, topic) {
  const t = store.meta && store.meta.topics.find(x => x.name === topic);
  if (t && t.config && t.config["min.insync.replicas"] !== undefined) return t.config["min.insync.replicas"];
  return store.meta ? store.meta.config["min.insync.replicas"] : 1;
}

export function unclean(store, topic) {
  const t = store.meta && store.meta.topics.find(x => x.name === topic);
  if (t && t.config && t.config["unclean.leader.election.enable"] !== undefined) return t.config["unclean.leader.election.enable"];
  return store.meta ? store.meta.config["unclean.leader.election.enable"] : false;
}
