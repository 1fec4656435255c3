import json, random, sys
repos = ['llm', 'gs2d', 'llamacpp', 'transformer', 'nogo']
root = sys.argv[1] if len(sys.argv) > 1 else '/tmp/sample3'
eligible = []
counts = {}
for D in repos:
    fs = json.load(open(f'{root}/findings_{D}.json'))
    counts[D] = [len(fs), sum(1 for f in fs if f.get('uncalled') is True), sum(1 for f in fs if f.get('incomplete') is True)]
    for f in fs:
        if f.get('uncalled') is True or f.get('incomplete') is True:
            continue
        g = dict(f); g['repo'] = D
        eligible.append(g)
eligible.sort(key=lambda x: (x['repo'], x['file'], x['line'], x['column'], x['check']))
print('per repo [findings, uncalled, incomplete]:', counts)
print('eligible', len(eligible))
random.seed(20261207)
s = random.sample(eligible, 40) if len(eligible) > 40 else eligible
for i, x in enumerate(s, 1): x['n'] = i
json.dump(s, open(f'{root}/sample40.json', 'w'), indent=1)
for x in s:
    print(x['n'], x['repo'], x['file'].replace('/tmp/sample3/'+x['repo']+'/',''), x['line'], x['column'], x['check'], x['dependency'], 'FIX' if x['fixable'] else '')
