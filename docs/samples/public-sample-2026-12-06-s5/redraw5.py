# Re-draw sample 5 from a new run's findings (same seed, same eligibility),
# reusing the hand judgments of findings already judged (by place and check).
import json, random, sys
newdir = sys.argv[1]
repos = ['qmc', 'rwkv', 'ipsedo', 'soumik', 'vis4d']
key = lambda x: (x['repo'], x['file'], x['line'], x['column'], x['check'])
def load(d):
    out = []
    for D in repos:
        for f in json.load(open(f'{d}/findings_{D}.json')):
            g = dict(f); g['repo'] = D; out.append(g)
    return out
new = load(newdir)
judg = {}
for part in ('A', 'B'):
    judg.update(json.load(open(f'/tmp/sample5/judge/judgments-{part}.json')))
s40 = json.load(open('/tmp/sample5/run1/sample40.json'))
judged = {key(x): judg[str(x['n'])] for x in s40}
newkeys = {key(x): x for x in new}
print('first draw, as the new run reports each:')
for x in s40:
    k = key(x); n = newkeys.get(k)
    state = 'gone' if not n else ('uncalled' if n.get('uncalled') else 'eligible')
    fix = '' if not n else (' fixable' if n.get('fixable') else ' no fix')
    print(' ', x['n'], x['repo'], x['file'].rsplit('/', 1)[1], x['line'], x['check'], 'real=' + judged[k]['real'], 'fix=' + judged[k]['fix'], '->', state + fix)
elig = [x for x in new if not x.get('uncalled') and not x.get('incomplete')]
elig.sort(key=key)
print('eligible', len(elig))
random.seed(20261208)
s = random.sample(elig, 40)
s.sort(key=key)
todo = []
real = 0
for i, x in enumerate(s, 1):
    x['n'] = i
    j = judged.get(key(x))
    if j:
        real += j['real'] == 'yes'
    else:
        todo.append(x)
print('redraw: %d judged before (%d real), %d new' % (40 - len(todo), real, len(todo)))
json.dump(s, open(f'{newdir}/sample40-redraw.json', 'w'), indent=1)
json.dump(todo, open(f'{newdir}/to-judge.json', 'w'), indent=1)
for x in todo:
    print('  new', x['n'], x['repo'], x['file'].replace('/tmp/sample5/' + x['repo'] + '/', ''), x['line'], x['check'], x['dependency'])
